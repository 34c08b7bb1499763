//! Tests that need a part from outside this repository (issue 40 item 5: a skipped test is not
//! a passed test). Such a test never returns early when its part is missing: it is
//!
//! ```ignore
//! #[tokio::test]
//! #[ignore = "needs the real WooCommerce: bash .ci/real-woo.sh test"]
//! async fn my_real_store_test() {
//!     let store = real_store(); // panics, naming the command, when the store is not up
//! }
//! ```
//!
//! so a plain `cargo test` counts it as *ignored*, and `-- --include-ignored` (what `.ci/run`
//! does once it has set every part up) runs it and fails it loudly when the part is missing.
//! The parts and the reasons to write in `#[ignore = "…"]` (literal strings: the attribute
//! takes no constant):
//!
//! | part | `#[ignore = …]` | accessor |
//! |---|---|---|
//! | the real WooCommerce | `"needs the real WooCommerce: bash .ci/real-woo.sh test"` | `real_woo::store::real_store()` |
//! | `../shared` | `"needs ../shared (the upstream Shopify schema): cargo test -- --include-ignored with ../shared beside the clone"` | [`shared_file`] |
//! | an OTLP decoder | `"needs BCP_OTLP_PYTHON (a python with opentelemetry-proto): .ci/run sets it up"` | [`required_env`] |
//! | redis-server | `"needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"` | `redis::RedisServer::run` |
//! | Chromium | `"needs Chromium: cargo test -- --include-ignored with chromium on the PATH (.ci/run installs it)"` | `chromium::Browser::launch` |

use std::path::PathBuf;

/// The value of `var`, which names an outside part an ignored test needs; without it the test
/// fails here, saying what `command` sets it up.
pub fn required_env(var: &str, command: &str) -> String {
    match std::env::var(var) {
        Ok(value) if !value.is_empty() => value,
        _ => panic!("{var} is not set: this test needs an outside part; run: {command}"),
    }
}

/// The folder of upstream material beside the clone (`../shared`; `BCP_SHARED_DIR` names
/// another place, e.g. a worktree whose parent holds none).
pub fn shared_dir() -> PathBuf {
    match std::env::var_os("BCP_SHARED_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared")),
    }
}

/// A file under `../shared` an ignored test needs, read; it fails here when the file is not
/// there rather than checking less.
pub fn shared_file(relative: &str) -> (PathBuf, String) {
    let path = shared_dir().join(relative);
    match std::fs::read_to_string(&path) {
        Ok(text) => (path, text),
        Err(error) => panic!(
            "cannot read {} ({error}): this test needs the shared folder beside the clone \
             (or BCP_SHARED_DIR naming it)",
            path.display()
        ),
    }
}
