//! The product cache decorator (`platform::cache::CachedCatalog`) over a counting fake store,
//! and the webhooks that invalidate it, over loopback HTTP.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use bcp_bridge::model::{
    BuyerContext, CartDraft, CartLineInput, CartOutcome, CartState, ProductHit, Resolved,
    SearchPage, SearchRequest,
};
use bcp_bridge::platform::cache::{CacheConfig, CachedCatalog};
use bcp_bridge::platform::{CartPort, CatalogPort, Platform, PlatformError, SharedPlatform};
use bcp_bridge::settings::Secret;
use bcp_bridge::startup::BridgeConfig;

const PRODUCT: &str = "prod_abc123";
const VARIANT: &str = "prod_abc123_blu_8";

#[derive(Default)]
struct Counts {
    product: AtomicUsize,
    resolve: AtomicUsize,
    search: AtomicUsize,
    get_cart: AtomicUsize,
}

/// The sample store, counting every call that reaches it and answering slowly enough that
/// concurrent callers overlap.
struct Counting {
    inner: SharedPlatform,
    counts: Arc<Counts>,
}

#[async_trait]
impl CatalogPort for Counting {
    async fn search(&self, request: &SearchRequest) -> Result<SearchPage, PlatformError> {
        self.counts.search.fetch_add(1, Ordering::SeqCst);
        self.inner.catalog.search(request).await
    }
    async fn resolve(
        &self,
        ids: &[String],
        context: &BuyerContext,
    ) -> Result<Vec<Resolved>, PlatformError> {
        self.counts.resolve.fetch_add(1, Ordering::SeqCst);
        self.inner.catalog.resolve(ids, context).await
    }
    async fn product(
        &self,
        id: &str,
        context: &BuyerContext,
    ) -> Result<Option<ProductHit>, PlatformError> {
        self.counts.product.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(50)).await;
        self.inner.catalog.product(id, context).await
    }
}

#[async_trait]
impl CartPort for Counting {
    async fn create(&self, draft: &CartDraft) -> Result<CartOutcome, PlatformError> {
        self.inner.carts.create(draft).await
    }
    async fn get(&self, id: &str) -> Result<Option<CartState>, PlatformError> {
        self.counts.get_cart.fetch_add(1, Ordering::SeqCst);
        self.inner.carts.get(id).await
    }
    async fn replace(
        &self,
        id: &str,
        draft: &CartDraft,
    ) -> Result<Option<CartOutcome>, PlatformError> {
        self.inner.carts.replace(id, draft).await
    }
    async fn cancel(&self, id: &str) -> Result<Option<CartState>, PlatformError> {
        self.inner.carts.cancel(id).await
    }
}

async fn counting() -> (SharedPlatform, Arc<Counts>) {
    let config = BridgeConfig::default();
    let sample = config
        .build_platform("http://127.0.0.1:1".to_owned())
        .await
        .unwrap();
    let counts = Arc::new(Counts::default());
    let counting = Arc::new(Counting {
        inner: sample.clone(),
        counts: counts.clone(),
    });
    (
        Arc::new(Platform::new(
            sample.info.clone(),
            counting.clone(),
            counting,
            sample.health.clone(),
        )),
        counts,
    )
}

async fn cached(ttl: Duration, search: bool) -> (Arc<CachedCatalog>, Arc<Counts>) {
    let (inner, counts) = counting().await;
    let config = CacheConfig {
        search,
        ..CacheConfig::default()
    };
    (
        Arc::new(CachedCatalog::with_ttl(inner.catalog.clone(), &config, ttl)),
        counts,
    )
}

fn brazil() -> BuyerContext {
    BuyerContext {
        country: Some("BR".into()),
        currency: Some("BRL".into()),
        ..BuyerContext::default()
    }
}

#[tokio::test]
async fn concurrent_identical_get_product_calls_reach_the_store_once() {
    let (cache, counts) = cached(Duration::from_secs(60), false).await;
    let calls = (0..16).map(|_| {
        let cache = cache.clone();
        tokio::spawn(async move { cache.product(PRODUCT, &brazil()).await })
    });
    for call in calls {
        let hit = call.await.unwrap().unwrap().expect("product exists");
        assert_eq!(hit.product.id, PRODUCT);
    }
    assert_eq!(counts.product.load(Ordering::SeqCst), 1);
    // Later calls are served from the cache too.
    cache.product(PRODUCT, &brazil()).await.unwrap();
    assert_eq!(counts.product.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn buyer_context_is_part_of_the_key() {
    let (cache, counts) = cached(Duration::from_secs(60), false).await;
    cache.product(PRODUCT, &brazil()).await.unwrap();
    cache
        .product(PRODUCT, &BuyerContext::default())
        .await
        .unwrap();
    assert_eq!(counts.product.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn expired_entries_are_fetched_again() {
    let (cache, counts) = cached(Duration::from_millis(200), false).await;
    cache.product(PRODUCT, &brazil()).await.unwrap();
    cache.product(PRODUCT, &brazil()).await.unwrap();
    assert_eq!(counts.product.load(Ordering::SeqCst), 1);
    tokio::time::sleep(Duration::from_millis(600)).await;
    cache.product(PRODUCT, &brazil()).await.unwrap();
    assert_eq!(counts.product.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn unknown_products_are_cached_as_absent() {
    let (cache, counts) = cached(Duration::from_secs(60), false).await;
    assert!(
        cache
            .product("prod_nope", &brazil())
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        cache
            .product("prod_nope", &brazil())
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(counts.product.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn resolve_is_cached_per_id_and_only_misses_go_upstream() {
    let (cache, counts) = cached(Duration::from_secs(60), false).await;
    let first = cache
        .resolve(&[PRODUCT.to_owned()], &brazil())
        .await
        .unwrap();
    assert_eq!(first.len(), 1);
    let both = cache
        .resolve(&[PRODUCT.to_owned(), VARIANT.to_owned()], &brazil())
        .await
        .unwrap();
    assert_eq!(both.len(), 2);
    assert_eq!(counts.resolve.load(Ordering::SeqCst), 2);
    let again = cache
        .resolve(&[VARIANT.to_owned(), PRODUCT.to_owned()], &brazil())
        .await
        .unwrap();
    assert_eq!(again.len(), 2);
    assert_eq!(counts.resolve.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn carts_are_never_cached() {
    let (store, counts) = counting().await;
    let config = CacheConfig {
        search: true,
        ..CacheConfig::default()
    };
    let (cached, _) = bcp_bridge::platform::cache::wrap(store, &config);
    let cache = &cached.carts;
    let outcome = cache
        .create(&CartDraft {
            lines: vec![CartLineInput {
                item_id: VARIANT.to_owned(),
                quantity: 1,
            }],
            context: brazil(),
            ..CartDraft::default()
        })
        .await
        .unwrap();
    let id = outcome.cart.id.clone();
    cache.get(&id).await.unwrap().expect("cart exists");
    cache.get(&id).await.unwrap().expect("cart exists");
    assert_eq!(counts.get_cart.load(Ordering::SeqCst), 2);
    cache.cancel(&id).await.unwrap();
    // A cached cart would still be visible here.
    assert!(cache.get(&id).await.unwrap().is_none());
}

#[tokio::test]
async fn invalidation_drops_every_context_every_alias_and_search_pages() {
    let (cache, counts) = cached(Duration::from_secs(60), true).await;
    cache.product(PRODUCT, &brazil()).await.unwrap();
    cache
        .product(PRODUCT, &BuyerContext::default())
        .await
        .unwrap();
    // A variant id resolves to the product: its entry must go too.
    cache.product(VARIANT, &brazil()).await.unwrap();
    cache
        .resolve(&[VARIANT.to_owned()], &brazil())
        .await
        .unwrap();
    let search = SearchRequest {
        query: Some("blue runner".into()),
        filters: Default::default(),
        context: brazil(),
        upstream_cursor: None,
        limit: 10,
    };
    cache.search(&search).await.unwrap();
    cache.search(&search).await.unwrap();
    assert_eq!(counts.product.load(Ordering::SeqCst), 3);
    assert_eq!(counts.search.load(Ordering::SeqCst), 1);

    cache.invalidate_product(&[PRODUCT.to_owned()]);

    cache.product(PRODUCT, &brazil()).await.unwrap();
    cache
        .product(PRODUCT, &BuyerContext::default())
        .await
        .unwrap();
    cache.product(VARIANT, &brazil()).await.unwrap();
    cache
        .resolve(&[VARIANT.to_owned()], &brazil())
        .await
        .unwrap();
    cache.search(&search).await.unwrap();
    assert_eq!(counts.product.load(Ordering::SeqCst), 6);
    assert_eq!(counts.resolve.load(Ordering::SeqCst), 2);
    assert_eq!(counts.search.load(Ordering::SeqCst), 2);
}

/// Issue 39 item 2: search pages are kept by default, and a product's change drops every page,
/// those that did not list it too — the product may now match them (renamed, new, back in
/// stock), and no page may be older than the webhook that changed its answer.
#[tokio::test]
async fn search_pages_are_kept_by_default_and_any_product_change_drops_them_all() {
    assert!(CacheConfig::default().search);
    let (cache, counts) = cached(Duration::from_secs(60), CacheConfig::default().search).await;
    let search = SearchRequest {
        query: Some("no such product anywhere".into()),
        filters: Default::default(),
        context: brazil(),
        upstream_cursor: None,
        limit: 10,
    };
    let page = cache.search(&search).await.unwrap();
    assert!(page.products.iter().all(|product| product.id != PRODUCT));
    cache.search(&search).await.unwrap();
    assert_eq!(counts.search.load(Ordering::SeqCst), 1, "kept");

    cache.invalidate_product(&[PRODUCT.to_owned()]);
    cache.search(&search).await.unwrap();
    assert_eq!(counts.search.load(Ordering::SeqCst), 2, "dropped");
}

// --- webhooks over loopback HTTP -------------------------------------------------------------

use crate::support::store_webhooks::hmac_base64 as sign;

async fn serve_hooks(cache: Arc<CachedCatalog>, secret: &str) -> String {
    let secret = Secret(secret.to_owned().into());
    let router = bcp_bridge::inbound_webhooks::routes(Some(cache), Some(&secret));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{addr}")
}

#[tokio::test]
async fn signed_webhooks_invalidate_and_unsigned_ones_change_nothing() {
    let secret = "whsec_test_value";
    let (cache, counts) = cached(Duration::from_secs(60), false).await;
    let base = serve_hooks(cache.clone(), secret).await;
    let client = reqwest::Client::new();
    cache.product(PRODUCT, &brazil()).await.unwrap();
    assert_eq!(counts.product.load(Ordering::SeqCst), 1);

    let body = format!(r#"{{"id":"{PRODUCT}","title":"Blue Runner Pro"}}"#);
    for (path, header) in [
        ("/webhooks/shopify", "X-Shopify-Hmac-Sha256"),
        ("/webhooks/woocommerce", "X-WC-Webhook-Signature"),
    ] {
        let before = counts.product.load(Ordering::SeqCst);
        // Missing and wrong signatures: 401, cache untouched.
        let missing = client
            .post(format!("{base}{path}"))
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(missing.status(), 401);
        let wrong = client
            .post(format!("{base}{path}"))
            .header(header, sign("another-secret", body.as_bytes()))
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(wrong.status(), 401);
        cache.product(PRODUCT, &brazil()).await.unwrap();
        assert_eq!(
            counts.product.load(Ordering::SeqCst),
            before,
            "{path}: a refused webhook changed nothing"
        );

        let signed = client
            .post(format!("{base}{path}"))
            .header(header, sign(secret, body.as_bytes()))
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(signed.status(), 200, "{path}");
        cache.product(PRODUCT, &brazil()).await.unwrap();
        assert_eq!(
            counts.product.load(Ordering::SeqCst),
            before + 1,
            "{path} invalidated the product"
        );
    }
}

/// Issue 35 item 4: a product webhook is taken once per delivery id and body. The store's
/// retry of a delivery, or a replayed copy of it, drops nothing more; the delivery id is not
/// signed, so a copy of a body under another id, or another body under a taken id, is a
/// delivery of its own (dropping a product again holds no state: the next read asks the store).
#[tokio::test]
async fn a_replayed_product_webhook_delivery_drops_nothing_more() {
    let secret = "whsec_replay_value";
    let (cache, counts) = cached(Duration::from_secs(60), false).await;
    let base = serve_hooks(cache.clone(), secret).await;
    let client = reqwest::Client::new();
    cache.product(PRODUCT, &brazil()).await.unwrap();
    let body = format!(r#"{{"id":"{PRODUCT}","title":"Blue Runner Pro"}}"#);
    let renamed = format!(r#"{{"id":"{PRODUCT}","title":"Blue Runner Max"}}"#);
    for (path, signature, delivery) in [
        (
            "/webhooks/shopify",
            "X-Shopify-Hmac-Sha256",
            "X-Shopify-Webhook-Id",
        ),
        (
            "/webhooks/woocommerce",
            "X-WC-Webhook-Signature",
            "X-WC-Webhook-Delivery-ID",
        ),
    ] {
        let send = |body: &str, id: &str| {
            client
                .post(format!("{base}{path}"))
                .header(signature, sign(secret, body.as_bytes()))
                .header(delivery, id)
                .body(body.to_owned())
                .send()
        };
        // Whether the product was dropped: the next read reaches the store.
        let dropped = || async {
            let before = counts.product.load(Ordering::SeqCst);
            cache.product(PRODUCT, &brazil()).await.unwrap();
            counts.product.load(Ordering::SeqCst) > before
        };
        assert_eq!(send(&body, "delivery-1").await.unwrap().status(), 200);
        assert!(
            dropped().await,
            "{path}: the first delivery drops the product"
        );
        for _ in 0..3 {
            assert_eq!(send(&body, "delivery-1").await.unwrap().status(), 200);
            assert!(
                !dropped().await,
                "{path}: a replayed delivery dropped it again"
            );
        }
        assert_eq!(send(&renamed, "delivery-1").await.unwrap().status(), 200);
        assert!(dropped().await, "{path}: another body is another delivery");
        assert_eq!(send(&body, "delivery-2").await.unwrap().status(), 200);
        assert!(
            dropped().await,
            "{path}: another delivery id is another delivery"
        );
        // A refused body is not taken: the store's corrected retry under its id is.
        let junk = r#"{"title":"no id"}"#;
        assert_eq!(send(junk, "delivery-3").await.unwrap().status(), 400);
        assert_eq!(send(junk, "delivery-3").await.unwrap().status(), 400);
    }
}
