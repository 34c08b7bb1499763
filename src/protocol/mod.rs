//! The wire: serde shapes of everything BCP sends and receives. Nothing here knows a platform
//! or a protocol rule; the brain fills these structs from the model.

pub mod address;
pub mod answer;
pub mod canonical;
pub mod cart;
pub mod catalog;
pub mod checkout;
pub mod envelope;
pub mod fiscal;
pub mod message;
pub mod namespaces;
pub mod profile;
pub mod request;
pub mod tool;

pub use envelope::{Capability, Edition, Namespace, Release, Ucp};
pub use message::{Message, MessageCode, Severity};
pub use namespaces::Protocol;
pub use tool::ToolName;
