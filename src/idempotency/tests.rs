//! The idempotent run: replays, releases, what keeps how long, and the per-client shares.

#![allow(clippy::unwrap_used, clippy::panic)]
use super::*;
use serde_json::json;

const CART: Claimant = Claimant {
    client: Client::UNKNOWN,
    tool: ToolName::new(
        "create_cart",
        crate::protocol::Capability::Cart,
        Effect::Changes,
    ),
};
const ROOM: Room = Room {
    bytes: 0,
    completion: false,
};

#[test]
fn fingerprint_ignores_meta_and_key_order() {
    let a = json!({"meta": {"idempotency-key": "a"}, "cart": {"x": 1, "y": [1, {"b": 2, "a": 1}]}});
    let b = json!({"cart": {"y": [1, {"a": 1, "b": 2}], "x": 1}, "meta": {"idempotency-key": "b"}});
    assert_eq!(fingerprint(&a), fingerprint(&b));
    let c = json!({"cart": {"y": [1, {"a": 1, "b": 3}], "x": 1}});
    assert_ne!(fingerprint(&a), fingerprint(&c));
}

#[tokio::test]
async fn a_dropped_request_releases_its_claim() {
    let store: SharedStore = Arc::new(MemoryStore::default());
    let idempotency = Idempotency::new(&IdempotencyConfig::default(), store.clone());
    let pending = idempotency.run(
        "k",
        "fp",
        CART,
        std::future::pending::<Result<Answer, IdempotencyError>>(),
    );
    // Polls the request until it has claimed the key, then drops it.
    let _ = tokio::time::timeout(Duration::from_millis(50), pending).await;
    tokio::task::yield_now().await;
    let claim = store
        .claim("k", "fp", Duration::from_secs(1), ROOM)
        .await
        .unwrap();
    assert_eq!(claim, None, "the key is free again");
    assert_eq!(
        idempotency.quotas().held(Holder::Unknown),
        0,
        "and its share"
    );
}

fn business_error() -> Answer {
    Answer::encode(
        &json!({"ucp": {"status": "error"}, "messages": [{"type": "error", "code": "out_of_stock"}]}),
        Outcome::BusinessError,
    )
    .unwrap()
}

fn success(n: u32) -> Answer {
    Answer::encode(
        &json!({"ucp": {"status": "success"}, "n": n}),
        Outcome::Success,
    )
    .unwrap()
}

/// Runs `answer` under `key` for `claimant`, counting the runs that reached the store.
async fn keyed(
    idempotency: &Idempotency,
    key: &str,
    claimant: Claimant,
    runs: &std::sync::atomic::AtomicUsize,
    answer: Answer,
) -> Result<Answer, IdempotencyError> {
    idempotency
        .run(key, "fp", claimant, async {
            runs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(answer)
        })
        .await
}

#[tokio::test]
async fn a_business_error_is_kept_for_the_lock_window_and_a_success_for_the_day() {
    // Issue 35 item 2: an answer that changed nothing is not kept 24 h; CART-026: a
    // success (and any completion answer) is.
    let config = IdempotencyConfig {
        lock_secs: 1,
        ..IdempotencyConfig::default()
    };
    let store: SharedStore = Arc::new(MemoryStore::default());
    let idempotency = Idempotency::new(&config, store.clone());
    let completion = Claimant {
        client: Client::UNKNOWN,
        tool: ToolName::new(
            "complete_checkout",
            crate::protocol::Capability::Checkout,
            Effect::Completes,
        ),
    };
    let runs = std::sync::atomic::AtomicUsize::new(0);
    let refused = keyed(&idempotency, "e", CART, &runs, business_error()).await;
    let made = keyed(&idempotency, "s", CART, &runs, success(1))
        .await
        .unwrap();
    keyed(&idempotency, "c", completion, &runs, business_error())
        .await
        .unwrap();
    // Within the window a duplicate gets the same answer, running nothing.
    let again = keyed(&idempotency, "e", CART, &runs, success(2)).await;
    assert_eq!(again.unwrap().json(), refused.unwrap().json());
    assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 3);
    let deadline = Instant::now() + Duration::from_secs(10);
    while store.peek("e").await.unwrap().is_some() {
        assert!(
            Instant::now() < deadline,
            "the business error outlived its window"
        );
        tokio::time::sleep(POLL).await;
    }
    // Past it, the same key runs again and gets a fresh answer.
    let fresh = keyed(&idempotency, "e", CART, &runs, success(3)).await;
    assert_eq!(fresh.unwrap().json(), success(3).json());
    // The success and the completion's answer are still replayed, byte for byte.
    let replayed = keyed(&idempotency, "s", CART, &runs, success(4)).await;
    assert_eq!(replayed.unwrap().json(), made.json());
    let completed = keyed(&idempotency, "c", completion, &runs, success(5)).await;
    assert_eq!(completed.unwrap().json(), business_error().json());
    assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 4);
}

#[tokio::test]
async fn a_client_past_its_share_is_refused_by_its_own_records_and_others_go_on() {
    // Issue 35 item 2
    let config = IdempotencyConfig {
        client_bytes: 3 * 4096,
        max_record_bytes: 4096,
        ..IdempotencyConfig::default()
    };
    let idempotency = Idempotency::new(&config, Arc::new(MemoryStore::default()));
    let flooder = Claimant {
        client: Client::new(None, Some("192.0.2.1".parse().unwrap())),
        tool: ToolName::new(
            "create_cart",
            crate::protocol::Capability::Cart,
            Effect::Changes,
        ),
    };
    let buyer = Claimant {
        client: Client::new(None, Some("192.0.2.2".parse().unwrap())),
        tool: ToolName::new(
            "create_cart",
            crate::protocol::Capability::Cart,
            Effect::Changes,
        ),
    };
    let runs = std::sync::atomic::AtomicUsize::new(0);
    let mut refused = None;
    for n in 0..100 {
        match keyed(&idempotency, &format!("f{n}"), flooder, &runs, success(n)).await {
            Ok(_) => {}
            Err(error) => {
                refused = Some((n, error));
                break;
            }
        }
    }
    let (n, error) = refused.unwrap();
    assert!(n > 10, "small records fill a share slowly: refused at {n}");
    let IdempotencyError::Full { retry_after_secs } = error else {
        panic!("{error:?}");
    };
    assert!(
        retry_after_secs > 86_000,
        "its own oldest record: {retry_after_secs}"
    );
    // A refused key ran nothing and holds nothing; a replay is still served.
    assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), n as usize);
    let replay = keyed(&idempotency, "f0", flooder, &runs, success(99)).await;
    assert_eq!(replay.unwrap().json(), success(0).json());
    // Another client has its whole share.
    keyed(&idempotency, "b0", buyer, &runs, success(0))
        .await
        .unwrap();
}

#[test]
fn scoped_keys_differ_by_profile_tool_and_key() {
    let base = scoped_key("p", "update_cart", "k");
    assert_ne!(base, scoped_key("q", "update_cart", "k"));
    assert_ne!(base, scoped_key("p", "cancel_cart", "k"));
    assert_ne!(base, scoped_key("p", "update_cart", "l"));
}
