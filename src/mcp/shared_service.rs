//! rmcp's HTTP service behind an `Arc`. axum clones a route's service for every request, and
//! cloning rmcp's copies its configuration (the Host and Origin allow-lists); the direct
//! `tools/call` path never reaches the service, so it should not pay for that. Requests that
//! do reach rmcp clone it once, as rmcp itself does in `call`.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use tower_service::Service;

pub struct SharedService<S>(Arc<S>);

impl<S> SharedService<S> {
    pub fn new(service: S) -> Self {
        Self(Arc::new(service))
    }
}

impl<S> Clone for SharedService<S> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<S, Request> Service<Request> for SharedService<S>
where
    S: Service<Request, Error = Infallible> + Clone,
{
    type Response = S::Response;
    type Error = Infallible;
    type Future = S::Future;

    /// rmcp's service is always ready (it spawns its work per request).
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        S::clone(&self.0).call(request)
    }
}
