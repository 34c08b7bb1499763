//! How a late or oversized request body shows up in the error a front reads it with: the
//! accept loop (src/startup/accept.rs) fails a body that misses `server.body_read_timeout_ms`
//! with [`BodyTimedOut`], and both fronts (MCP, REST) look for it, or for the length cap's
//! error, in the chain of causes.

/// The request body did not arrive within `server.body_read_timeout_ms`.
#[derive(Debug, thiserror::Error)]
#[error("request body not received within the body read timeout")]
pub struct BodyTimedOut;

/// Whether `error`, or any of its sources, is an `E`: axum wraps the body's own error.
pub fn caused_by<E: std::error::Error + 'static>(
    error: &(dyn std::error::Error + 'static),
) -> bool {
    let mut cause = Some(error);
    while let Some(current) = cause {
        if current.is::<E>() {
            return true;
        }
        cause = current.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("wrapped")]
    struct Wrapper(#[source] BodyTimedOut);

    #[test]
    fn a_timeout_is_found_behind_a_wrapper() {
        let wrapped = Wrapper(BodyTimedOut);
        assert!(caused_by::<BodyTimedOut>(&wrapped));
        let other = std::io::Error::other("reset");
        assert!(!caused_by::<BodyTimedOut>(&other));
    }
}
