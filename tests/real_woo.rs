//! The WooCommerce adapter against a real WordPress 7.0.4 + WooCommerce 10.9.4 on loopback,
//! stood up by `.ci/real-woo.sh` (`bash .ci/real-woo.sh test` runs these locally). Without
//! `BCP_REAL_WOO_URL` every test here reports itself skipped, with the reason, on stderr.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "real_woo/mod.rs"]
mod real_woo;
mod support;
