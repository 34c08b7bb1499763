//! A store for the catalog decorators' tests: every read waits until the test lets one
//! answer, and each is counted, so a test can hold reads in flight and see what reached it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::Semaphore;

use super::catalog::CatalogPort;
use super::port::PlatformError;
use crate::model::{BuyerContext, Filters, ProductHit, Resolved, SearchPage, SearchRequest};

pub struct HeldStore {
    requests: AtomicUsize,
    /// One permit lets one read answer.
    pub answers: Semaphore,
}

impl HeldStore {
    pub fn new() -> Self {
        Self {
            requests: AtomicUsize::new(0),
            answers: Semaphore::new(0),
        }
    }

    /// The reads that reached the store so far.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// Counts the read, waits for its permit and names it by its number ("answer 2").
    async fn answer(&self) -> String {
        let request = self.requests.fetch_add(1, Ordering::SeqCst) + 1;
        self.answers.acquire().await.unwrap().forget();
        format!("answer {request}")
    }
}

#[async_trait]
impl CatalogPort for HeldStore {
    async fn search(&self, _: &SearchRequest) -> Result<SearchPage, PlatformError> {
        Ok(SearchPage {
            products: Vec::new(),
            next_cursor: Some(self.answer().await),
            total_count: None,
        })
    }
    async fn resolve(
        &self,
        _: &[String],
        _: &BuyerContext,
    ) -> Result<Vec<Resolved>, PlatformError> {
        self.answer().await;
        Ok(Vec::new())
    }
    async fn product(
        &self,
        _: &str,
        _: &BuyerContext,
    ) -> Result<Option<ProductHit>, PlatformError> {
        self.answer().await;
        Ok(None)
    }
}

pub fn search(query: &str) -> SearchRequest {
    SearchRequest {
        query: Some(query.to_owned()),
        filters: Filters::default(),
        context: BuyerContext::default(),
        upstream_cursor: None,
        limit: 10,
    }
}

/// Waits for `done`, failing the test with `what` after 10 s.
pub async fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
