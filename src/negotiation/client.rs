//! The SSRF-safe profile fetch for other readers of agent profiles (signature keys): the
//! same checks, limits and timeouts as negotiation's own fetch, under `[negotiation]`. The
//! same rules also guard the bridge's own requests to a URL an agent's profile names (its
//! order webhook): `client_for`.

use std::time::Duration;

use bytes::Bytes;

use super::fetch::{Fetcher, Resolver};
use super::{NegotiationConfig, Refusal};

pub struct ProfileClient {
    fetcher: Fetcher,
}

impl ProfileClient {
    pub fn new(config: &NegotiationConfig) -> Self {
        Self {
            fetcher: Fetcher::new(config, Resolver::System),
        }
    }

    /// The profile document's bytes, or the negotiation code of why not.
    pub async fn fetch(&self, profile: &str) -> Result<Bytes, Refusal> {
        self.fetcher.fetch(profile).await
    }

    /// A client pinned to `url`'s checked address, or why the rules forbid the URL.
    pub async fn client_for(
        &self,
        url: &url::Url,
        timeout: Duration,
    ) -> Result<reqwest::Client, Refusal> {
        self.fetcher.client_for(url, timeout).await
    }
}
