//! Pix paid inside the conversation (BCP `br.dev.bcp.pix`): the merchant's PSP reached through
//! the Central Bank's standard API Pix. `port` is the seam the brain sees; the API Pix client,
//! `[pix]` and the BR Code live beside it.

pub mod port;
pub mod settings;
