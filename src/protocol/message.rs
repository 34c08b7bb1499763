use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Recoverable,
    RequiresBuyerInput,
    RequiresBuyerReview,
    Unrecoverable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageType {
    Error,
    Warning,
    Info,
}

/// One entry of `messages[]`. Errors carry a severity; warnings and info do not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Message {
    #[serde(rename = "type")]
    pub kind: MessageType,
    pub code: String,
    pub content: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// RFC 9535 JSONPath into the response (`$.line_items[1]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl Message {
    pub fn error(code: &str, content: impl Into<String>, severity: Severity) -> Self {
        Self {
            kind: MessageType::Error,
            code: code.to_owned(),
            content: content.into(),
            severity: Some(severity),
            path: None,
        }
    }

    pub fn warning(code: &str, content: impl Into<String>) -> Self {
        Self {
            kind: MessageType::Warning,
            code: code.to_owned(),
            content: content.into(),
            severity: None,
            path: None,
        }
    }

    pub fn info(code: &str, content: impl Into<String>) -> Self {
        Self {
            kind: MessageType::Info,
            code: code.to_owned(),
            content: content.into(),
            severity: None,
            path: None,
        }
    }

    pub fn at(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }
}
