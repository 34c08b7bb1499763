//! Real-store tests; `store` is the harness (the store, its ids, its access log).
mod agent;
mod brazil;
mod brazil_wire;
mod cart;
mod catalog;
mod checkout;
mod concurrency;
mod counts;
mod deadline;
mod handoff;
mod pix;
mod pix_doctor;
mod replacement;
pub mod store;
mod wire;
