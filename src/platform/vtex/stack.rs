//! Which search API the store has: Intelligent Search v1, or only the legacy
//! `catalog_system/pub` search of older CMS/Portal stores. Probed once (at start when a runtime
//! is there, else on first use) and logged; a probe that fails for another reason than
//! "absent" is tried again on the next call.

use reqwest::StatusCode;
use tokio::sync::OnceCell;

use super::client::VtexApi;
use super::settings::SearchApi;
use crate::platform::port::PlatformError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stack {
    IntelligentSearch,
    Legacy,
}

impl Stack {
    pub fn describe(self) -> &'static str {
        match self {
            Self::IntelligentSearch => "catalog via Intelligent Search v1",
            Self::Legacy => {
                "catalog via the legacy catalog_system search (the store has no Intelligent Search)"
            }
        }
    }
}

pub struct StackProbe {
    mode: SearchApi,
    sales_channel: u32,
    known: OnceCell<Stack>,
}

impl StackProbe {
    pub fn new(mode: SearchApi, sales_channel: u32) -> Self {
        let known = match mode {
            SearchApi::Auto => OnceCell::new(),
            SearchApi::IntelligentSearch => OnceCell::new_with(Some(Stack::IntelligentSearch)),
            SearchApi::Legacy => OnceCell::new_with(Some(Stack::Legacy)),
        };
        Self {
            mode,
            sales_channel,
            known,
        }
    }

    pub fn known(&self) -> Option<Stack> {
        self.known.get().copied()
    }

    pub async fn get(&self, api: &VtexApi) -> Result<Stack, PlatformError> {
        self.known
            .get_or_try_init(|| async {
                let stack = self.probe(api).await?;
                tracing::info!(
                    mode = ?self.mode,
                    search = stack.describe(),
                    "VTEX search API probed"
                );
                Ok(stack)
            })
            .await
            .copied()
    }

    /// One page of one product from Intelligent Search: 404 means the store has none.
    async fn probe(&self, api: &VtexApi) -> Result<Stack, PlatformError> {
        let response = api
            .get(
                &["api", "intelligent-search", "v1", "product-search", ""],
                &[
                    ("count", "1".to_owned()),
                    ("sc", self.sales_channel.to_string()),
                ],
                None,
            )
            .await?;
        match response.status {
            StatusCode::OK => Ok(Stack::IntelligentSearch),
            StatusCode::NOT_FOUND => Ok(Stack::Legacy),
            _ => Err(super::client::unexpected("search probe", &response)),
        }
    }
}
