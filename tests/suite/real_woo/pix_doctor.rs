//! Issue 38 item 1 on the real WooCommerce: `doctor` asks whether the REST API v3 key may
//! write orders (what marking a Pix order paid takes) without changing one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::store::{RealStore, real_store, real_store_env, shared, sql};
use crate::support::pix_psp::PixPsp;

/// A REST API v3 key with Read permission only, made in the store's database for this test.
async fn read_only_key(store: &RealStore) -> (String, String) {
    let root = real_store_env("BCP_REAL_WOO_ROOT");
    let host = store
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/');
    let key = format!("ck_{}", uuid::Uuid::new_v4().simple());
    let secret = format!("cs_{}", uuid::Uuid::new_v4().simple());
    let script = format!(
        "$_SERVER['HTTP_HOST'] = '{host}'; $_SERVER['REQUEST_URI'] = '/'; require '{root}/site/wp-load.php'; \
         global $wpdb; $wpdb->insert($wpdb->prefix . 'woocommerce_api_keys', array('user_id' => 1, \
         'description' => 'bcp-bridge read-only test', 'permissions' => 'read', 'consumer_key' => wc_api_hash('{key}'), \
         'consumer_secret' => '{secret}', 'truncated_key' => substr('{key}', -7))) or exit(1);"
    );
    let made = tokio::process::Command::new("php")
        .args(["-r", &script])
        .output()
        .await
        .expect("php runs");
    assert!(made.status.success(), "{made:?}");
    (key, secret)
}

/// Issue 38 item 1 (`doctor`) on the real store: the key's write permission is asked without
/// changing an order; a Read key is named as what to fix, and no key is printed.
#[tokio::test]
#[ignore = "needs the real WooCommerce: bash .ci/real-woo.sh test"]
async fn issue_38_doctor_says_whether_the_v3_key_may_write_orders() {
    let store = real_store();
    let db = real_store_env("BCP_REAL_WOO_DB");
    let _guard = shared().await;
    let psp = PixPsp::start().await;
    let config = |key: &str, secret: &str| {
        let text = store.config(&format!(
            "consumer_key = {key:?}\nconsumer_secret = {secret:?}\nrest_v3_tls_proxy = true\n{}store_gateway = \"bacs\"\n",
            psp.pix_toml()
        ));
        bcp_bridge::startup::BridgeConfig::from_toml(&text).unwrap()
    };
    let mark = store.mark();
    let key = real_store_env("BCP_REAL_WOO_V3_KEY");
    let secret = real_store_env("BCP_REAL_WOO_V3_SECRET");
    let report = bcp_bridge::doctor::run(&config(&key, &secret), false).await;
    let text = report.render();
    let check = |report: &bcp_bridge::doctor::Report| {
        report
            .checks
            .iter()
            .find(|check| check.name == "pix orders")
            .map(|check| (check.passed, check.detail.clone()))
    };
    let (passed, detail) = check(&report).unwrap_or_else(|| panic!("no pix orders check: {text}"));
    assert!(passed && detail.contains("bacs"), "{text}");

    let (read_key, read_secret) = read_only_key(store).await;
    let report = bcp_bridge::doctor::run(&config(&read_key, &read_secret), false).await;
    let text = report.render();
    sql(
        &db,
        &format!("DELETE FROM wp_woocommerce_api_keys WHERE consumer_secret = '{read_secret}'"),
    )
    .await;
    let (passed, detail) = check(&report).unwrap_or_else(|| panic!("no pix orders check: {text}"));
    assert!(!passed && detail.contains("Read/Write"), "{text}");
    assert!(!report.agent_could_shop(), "{text}");
    for secret in [&key, &secret, &read_key, &read_secret] {
        assert!(!text.contains(secret.as_str()), "a key in {text}");
    }
    // Asked, not written: the only order writes were the probes of order 0, which no store
    // holds (other tests write their own orders meanwhile).
    let probes: Vec<String> = store
        .requests_since(mark)
        .await
        .into_iter()
        .filter(|line| line.starts_with("PUT /wp-json/wc/v3/orders/0"))
        .collect();
    assert_eq!(
        probes,
        [
            "PUT /wp-json/wc/v3/orders/0 400",
            "PUT /wp-json/wc/v3/orders/0 401"
        ],
        "{text}"
    );
}
