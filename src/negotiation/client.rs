//! The SSRF-safe profile fetch for other readers of agent profiles (signature keys): the
//! same checks, limits and timeouts as negotiation's own fetch, under `[negotiation]`.

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
}
