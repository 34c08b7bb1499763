//! How a late or oversized request body shows up in the error a front reads it with: the
//! accept loop (src/startup/accept.rs) fails a body that misses `server.body_read_timeout_ms`
//! with [`BodyTimedOut`], and both fronts (MCP, REST) look for it, or for the length cap's
//! error, in the chain of causes. A body whose declared length is over the cap is refused
//! before any of it is read ([`declared_over`]).

/// Whether `body` declares (by `Content-Length`) more than `limit` bytes: refused at once with
/// 413, rather than read up to the limit or held until the body deadline (a declared 10 GB
/// body that sends 10 bytes would otherwise hold its connection for the whole deadline).
pub fn declared_over(body: &impl http_body::Body, limit: usize) -> bool {
    body.size_hint().lower() > u64::try_from(limit).unwrap_or(u64::MAX)
}

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
