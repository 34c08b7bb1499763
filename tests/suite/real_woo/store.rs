//! The real store as the tests see it: its URL, the ids the catalog script wrote, its access
//! log (one line per request served) and the web server's PIDs. `.ci/real-woo.sh` exports
//! `BCP_REAL_WOO_URL` and `BCP_REAL_WOO_ROOT`. Every test that calls [`real_store`] is
//! `#[ignore = "needs the real WooCommerce: bash .ci/real-woo.sh test"]` and fails when the
//! store is not there (tests/support/outside.rs: a skipped test is not a passed test).

use std::path::PathBuf;
use std::sync::{LazyLock, OnceLock};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use tokio::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::support::TestBridge;

pub struct RealStore {
    /// With a trailing slash.
    pub url: String,
    root: PathBuf,
    ids: Value,
    pub http: reqwest::Client,
}

static STORE: OnceLock<Result<RealStore, String>> = OnceLock::new();

/// Tests that must see the store alone (request counts, a hung web server) take this
/// exclusively; every other test holds it shared for its whole run.
static ALONE: LazyLock<RwLock<()>> = LazyLock::new(|| RwLock::new(()));

static BAIRRO_STORE: OnceLock<Result<RealStore, String>> = OnceLock::new();

fn open() -> Result<RealStore, String> {
    open_at("BCP_REAL_WOO_URL", "BCP_REAL_WOO_ROOT")
}

fn open_at(url_var: &str, root_var: &str) -> Result<RealStore, String> {
    let Ok(url) = std::env::var(url_var) else {
        return Err(match std::env::var("BCP_REAL_WOO_SKIP") {
            Ok(reason) => format!("the real store could not be stood up: {reason}"),
            Err(_) => format!("{url_var} is not set"),
        });
    };
    let root = PathBuf::from(
        std::env::var(root_var).map_err(|_| format!("{url_var} is set but {root_var} is not"))?,
    );
    let ids_path = root.join("ids.json");
    let text = std::fs::read_to_string(&ids_path)
        .map_err(|error| format!("cannot read {}: {error}", ids_path.display()))?;
    let ids = serde_json::from_str(&text).map_err(|error| format!("ids.json: {error}"))?;
    let url = if url.ends_with('/') {
        url
    } else {
        format!("{url}/")
    };
    Ok(RealStore {
        url,
        root,
        ids,
        http: reqwest::Client::builder()
            .user_agent("bcp-real-woo-test")
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap(),
    })
}

/// The second store, which requires the bairro, with its own ids.
pub fn bairro_store() -> &'static RealStore {
    match BAIRRO_STORE
        .get_or_init(|| open_at("BCP_REAL_WOO_BAIRRO_URL", "BCP_REAL_WOO_BAIRRO_ROOT"))
    {
        Ok(store) => store,
        Err(reason) => panic!("this test needs the real WooCommerce: {reason}; run: {RUN_WITH}"),
    }
}

/// Run the real-store tests with this (it stands the store up first).
pub const RUN_WITH: &str = "bash .ci/real-woo.sh test";

/// The store `.ci/real-woo.sh` stood up; the calling test (an ignored one) fails here when
/// there is none, saying why and how to run it.
pub fn real_store() -> &'static RealStore {
    match STORE.get_or_init(open) {
        Ok(store) => store,
        Err(reason) => panic!("this test needs the real WooCommerce: {reason}; run: {RUN_WITH}"),
    }
}

/// The variable `.ci/real-woo.sh` sets beside the store (a second store, its database…).
pub fn real_store_env(var: &str) -> String {
    crate::support::outside::required_env(var, RUN_WITH)
}

pub async fn shared() -> RwLockReadGuard<'static, ()> {
    ALONE.read().await
}

pub async fn alone() -> RwLockWriteGuard<'static, ()> {
    ALONE.write().await
}

/// One Store API cart line: product or variation id and quantity.
pub type Line = (u64, u64);

impl RealStore {
    /// The numeric id the catalog script recorded under `name` (see tests/real_woo/catalog.php).
    pub fn id(&self, name: &str) -> u64 {
        self.ids[name]
            .as_u64()
            .unwrap_or_else(|| panic!("no id {name} in ids.json"))
    }

    /// A string the catalog script recorded under `name` (shipping rate ids).
    pub fn text(&self, name: &str) -> String {
        self.ids[name]
            .as_str()
            .unwrap_or_else(|| panic!("no string {name} in ids.json"))
            .to_owned()
    }

    pub fn sid(&self, name: &str) -> String {
        self.id(name).to_string()
    }

    /// A bridge config for this store; `extra` is appended after the `[store]` table.
    pub fn config(&self, extra: &str) -> String {
        format!(
            "[store]\nplatform = \"woocommerce\"\nbase_url = \"{}\"\ncurrency = \"BRL\"\nname = \"Loja Teste\"\n{extra}\n",
            self.url
        )
    }

    pub async fn bridge(&self, extra: &str) -> TestBridge {
        TestBridge::start(&self.config(extra)).await
    }

    fn log_path(&self) -> PathBuf {
        self.root.join("access.log")
    }

    /// Where the access log ends now; `requests_since` reads what was added after.
    pub fn mark(&self) -> u64 {
        std::fs::metadata(self.log_path())
            .map(|meta| meta.len())
            .unwrap_or(0)
    }

    /// The requests served since `mark`, as `METHOD URI STATUS`. PHP writes each line when
    /// its request ends, which may be just after the answer reached us: wait until the log
    /// stops growing.
    pub async fn requests_since(&self, mark: u64) -> Vec<String> {
        let mut last = self.mark();
        loop {
            tokio::time::sleep(Duration::from_millis(150)).await;
            let now = self.mark();
            if now == last {
                break;
            }
            last = now;
        }
        let bytes = std::fs::read(self.log_path()).unwrap();
        String::from_utf8_lossy(&bytes[mark as usize..])
            .lines()
            .map(|line| {
                line.split(' ')
                    .skip(1)
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    /// The web server's master and worker PIDs.
    pub fn web_pids(&self) -> Vec<String> {
        let master = std::fs::read_to_string(self.root.join("web.pid"))
            .unwrap()
            .trim()
            .to_owned();
        let children = std::process::Command::new("pgrep")
            .args(["-P", &master])
            .output()
            .unwrap();
        let mut pids = vec![master];
        pids.extend(
            String::from_utf8_lossy(&children.stdout)
                .split_whitespace()
                .map(str::to_owned),
        );
        pids
    }

    /// The cart the store holds for a Cart-Token, read straight from the Store API.
    pub async fn store_cart(&self, token: &str) -> Value {
        let response = self
            .http
            .get(format!("{}wp-json/wc/store/v1/cart", self.url))
            .header("cart-token", token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        response.json().await.unwrap()
    }

    pub async fn store_lines(&self, token: &str) -> Vec<Line> {
        cart_lines(&self.store_cart(token).await)
    }
}

/// `mysql` on the store's database (the test runs where the store runs, as CI does).
pub async fn sql(db: &str, query: &str) -> Vec<Vec<String>> {
    let output = tokio::process::Command::new("mysql")
        .args(["-N", "-B", "-uwoo", "-pwoopass", db, "-e", query])
        .output()
        .await
        .expect("mysql runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| line.split('\t').map(str::to_owned).collect())
        .collect()
}

/// Lines of a Store API cart body, sorted.
pub fn cart_lines(cart: &Value) -> Vec<Line> {
    let mut lines: Vec<Line> = cart["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            (
                item["id"].as_u64().unwrap(),
                item["quantity"].as_u64().unwrap(),
            )
        })
        .collect();
    lines.sort_unstable();
    lines
}

/// Lines of a BCP cart answer, sorted.
pub fn bcp_lines(cart: &Value) -> Vec<Line> {
    let mut lines: Vec<Line> = cart["line_items"]
        .as_array()
        .unwrap_or_else(|| panic!("no line_items: {cart}"))
        .iter()
        .map(|line| {
            (
                line["item"]["id"].as_str().unwrap().parse().unwrap(),
                line["quantity"].as_u64().unwrap(),
            )
        })
        .collect();
    lines.sort_unstable();
    lines
}

/// The Store API Cart-Token a BCP WooCommerce cart id wraps (`wcc1_<base64url(token)>`).
pub fn token_of(cart_id: &str) -> String {
    let encoded = cart_id.strip_prefix("wcc1_").unwrap();
    String::from_utf8(URL_SAFE_NO_PAD.decode(encoded).unwrap()).unwrap()
}

/// `line_items` for a BCP cart from `(id, quantity)` pairs.
pub fn items(lines: &[(String, u64)]) -> Value {
    Value::Array(
        lines
            .iter()
            .map(|(id, quantity)| serde_json::json!({"item": {"id": id}, "quantity": quantity}))
            .collect(),
    )
}
