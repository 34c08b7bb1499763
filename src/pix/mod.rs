//! Pix paid inside the conversation (BCP `br.dev.bcp.pix`): the merchant's PSP reached through
//! the Central Bank's standard API Pix. `port` is the seam the brain sees; the API Pix client
//! (`api`), `[pix]` (`settings`), the BR Code (`brcode`), its QR image (`qr`) and the txid
//! derivation (`txid`) live beside it.

pub mod api;
pub mod brcode;
mod pem;
pub mod port;
pub mod qr;
pub mod settings;
pub mod txid;
mod wire;

pub use api::ApiPix;
