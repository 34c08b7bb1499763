//! The one place a pipeline refusal becomes a JSON-RPC error object.

use rmcp::model::{ErrorCode, ErrorData};

use crate::pipeline::ProtocolError;

pub fn error_data(error: &ProtocolError) -> ErrorData {
    ErrorData::new(ErrorCode(error.code()), error.to_string(), error.data())
}
