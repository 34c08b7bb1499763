//! Where the rmcp tool handler leaves the HTTP status its error calls for, for the front to
//! apply (rmcp itself answers every JSON-RPC error with 200).

use std::sync::{Arc, Mutex};

use http::StatusCode;

/// Where the tool handler leaves the HTTP status its error calls for.
#[derive(Clone, Default)]
pub struct StatusSlot(Arc<Mutex<Option<StatusCode>>>);

impl StatusSlot {
    pub fn set(&self, status: StatusCode) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(status);
        }
    }

    pub fn take(&self) -> Option<StatusCode> {
        self.0.lock().ok().and_then(|mut slot| slot.take())
    }
}
