//! The tools of the shopping service, by name: what each is called on the wire, which
//! capability it belongs to, and whether it changes the store.

use super::Capability;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolName {
    SearchCatalog,
    LookupCatalog,
    GetProduct,
    CreateCart,
    GetCart,
    UpdateCart,
    CancelCart,
    CreateCheckout,
    GetCheckout,
    UpdateCheckout,
    CompleteCheckout,
    CancelCheckout,
    GetOrder,
}

impl ToolName {
    pub const ALL: [ToolName; 13] = [
        Self::SearchCatalog,
        Self::LookupCatalog,
        Self::GetProduct,
        Self::CreateCart,
        Self::GetCart,
        Self::UpdateCart,
        Self::CancelCart,
        Self::CreateCheckout,
        Self::GetCheckout,
        Self::UpdateCheckout,
        Self::CompleteCheckout,
        Self::CancelCheckout,
        Self::GetOrder,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::SearchCatalog => "search_catalog",
            Self::LookupCatalog => "lookup_catalog",
            Self::GetProduct => "get_product",
            Self::CreateCart => "create_cart",
            Self::GetCart => "get_cart",
            Self::UpdateCart => "update_cart",
            Self::CancelCart => "cancel_cart",
            Self::CreateCheckout => "create_checkout",
            Self::GetCheckout => "get_checkout",
            Self::UpdateCheckout => "update_checkout",
            Self::CompleteCheckout => "complete_checkout",
            Self::CancelCheckout => "cancel_checkout",
            Self::GetOrder => "get_order",
        }
    }

    pub fn capability(self) -> Capability {
        match self {
            Self::SearchCatalog => Capability::CatalogSearch,
            Self::LookupCatalog | Self::GetProduct => Capability::CatalogLookup,
            Self::CreateCart | Self::GetCart | Self::UpdateCart | Self::CancelCart => {
                Capability::Cart
            }
            Self::CreateCheckout
            | Self::GetCheckout
            | Self::UpdateCheckout
            | Self::CompleteCheckout
            | Self::CancelCheckout => Capability::Checkout,
            Self::GetOrder => Capability::Order,
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|tool| tool.as_str() == name)
    }

    /// Tools that change the store, and so honour `meta["idempotency-key"]`.
    pub fn mutates(self) -> bool {
        matches!(
            self,
            Self::CreateCart
                | Self::UpdateCart
                | Self::CancelCart
                | Self::CreateCheckout
                | Self::UpdateCheckout
                | Self::CompleteCheckout
                | Self::CancelCheckout
        )
    }
}
