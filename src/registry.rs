//! Which platforms the bridge can front, by the name `[store] platform` gives. Adding a
//! platform = a folder under `platform/` exporting its `FACTORY`, plus one line here.

use crate::platform::factory::PlatformFactory;
use crate::platform::{sample, shopify, vtex, woocommerce};

pub const PLATFORMS: &[PlatformFactory] = &[
    sample::FACTORY,
    shopify::FACTORY,
    woocommerce::FACTORY,
    vtex::FACTORY,
];

pub fn factory(name: &str) -> Option<&'static PlatformFactory> {
    PLATFORMS.iter().find(|factory| factory.name == name)
}

pub fn platform_names() -> Vec<&'static str> {
    PLATFORMS.iter().map(|factory| factory.name).collect()
}
