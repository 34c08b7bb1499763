//! The SSRF-safe profile fetch for other readers of agent profiles (signature keys): the
//! same checks, limits and timeouts as negotiation's own fetch, under `[negotiation]`. The
//! same rules also guard the bridge's own requests to a URL an agent's profile names (its
//! order webhook): `client_for`.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use super::fetch::{Fetcher, Resolver};
use super::{NegotiationConfig, NegotiationError};

/// Clones share one fetcher: its limits, and the documents it holds (see `fetch`).
#[derive(Clone)]
pub struct ProfileClient {
    pub(super) fetcher: Arc<Fetcher>,
}

impl ProfileClient {
    pub fn new(config: &NegotiationConfig) -> Self {
        Self {
            fetcher: Arc::new(Fetcher::new(config, Resolver::System)),
        }
    }

    /// The profile document's bytes, or the negotiation code of why not.
    pub async fn fetch(&self, profile: &str) -> Result<Bytes, NegotiationError> {
        self.fetcher.fetch(profile).await
    }

    /// The document asked of its host again (conditionally, when it carried a validator).
    pub async fn fetch_again(&self, profile: &str) -> Result<Bytes, NegotiationError> {
        self.fetcher.fetch_again(profile).await
    }

    /// A client pinned to `url`'s checked address, or why the rules forbid the URL.
    pub async fn client_for(
        &self,
        url: &url::Url,
        timeout: Duration,
    ) -> Result<reqwest::Client, NegotiationError> {
        self.fetcher.client_for(url, timeout).await
    }
}
