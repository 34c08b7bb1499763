//! Issue 36 item 4: rotating the order webhooks' signing key. A next key is published beside
//! the signing key, so a receiver that reads either bridge's profile verifies the events of
//! a bridge still on the old key and of one already on the new key (a rolling deploy, both
//! running at once). `check` names a bad next key by its setting.

use std::process::Command;

use serde_json::Value;

use crate::order_webhooks::{agent, config, key_file, place_order, text, verify, wait_for};
use crate::support::TestBridge;
use crate::support::binary::BIN;

fn kids(profile: &Value, field: &str) -> Vec<String> {
    profile[field]
        .as_array()
        .unwrap_or_else(|| panic!("{field}[] in {profile}"))
        .iter()
        .map(|key| key["kid"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn issue_36_item_4_both_keys_verify_while_the_signing_key_is_rotated() {
    let (agent_url, hook) = agent(0).await;
    let (old, new) = (key_file(false), key_file(true));
    let next =
        |file: &std::path::Path| format!("next_key_file = {:?}\n", file.display().to_string());
    // Before the promotion: signs with the old key, publishes the new one.
    let before = TestBridge::start(&config(&old, &next(&new))).await;
    // After it (another replica of the rolling deploy): signs with the new key and still
    // publishes the old one, for events signed before the switch.
    let after = TestBridge::start(&config(&new, &next(&old))).await;
    let profile_before: Value = before.get("/.well-known/ucp").await.json().await.unwrap();
    let profile_after: Value = after.get("/.well-known/ucp").await.json().await.unwrap();
    let (old_kid, new_kid) = (
        kids(&profile_before, "keys")[0].clone(),
        kids(&profile_after, "keys")[0].clone(),
    );
    assert_ne!(old_kid, new_kid);
    assert_eq!(
        kids(&profile_before, "keys"),
        vec![old_kid.clone(), new_kid.clone()]
    );
    assert_eq!(
        kids(&profile_after, "keys"),
        vec![new_kid.clone(), old_kid.clone()]
    );
    for profile in [&profile_before, &profile_after] {
        for key in profile["keys"].as_array().unwrap() {
            assert!(
                key.get("d").is_none(),
                "no private member is published: {key}"
            );
        }
    }
    // SIG-008: the 2026-04-08 profile lists both under `signing_keys`.
    let older: Value = before
        .get("/.well-known/ucp/2026-04-08")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        kids(&older, "signing_keys"),
        vec![old_kid.clone(), new_kid.clone()]
    );

    let profile = format!("{agent_url}/with-hook");
    place_order(&before, &profile).await;
    place_order(&after, &profile).await;
    let received = wait_for(&hook, 2, std::time::Duration::from_secs(10)).await;
    assert_eq!(received.len(), 2, "{received:?}");
    for request in &received {
        let sender = text(&request.headers, "ucp-agent");
        let expected = if sender.contains(&before.base_url) {
            &old_kid
        } else {
            &new_kid
        };
        // Whichever profile the receiver read, the event verifies.
        for keys in [&profile_before["keys"], &profile_after["keys"]] {
            let keyid = verify(request, keys.as_array().unwrap());
            assert_eq!(
                &keyid, expected,
                "signed by the signing key, never the next one"
            );
        }
    }
    let _ = std::fs::remove_file(old);
    let _ = std::fs::remove_file(new);
}

/// `check` output for a config text: its success and stdout.
fn check(text: &str) -> (bool, String) {
    let path = std::env::temp_dir().join(format!("bcp-rotation-{}.toml", uuid::Uuid::new_v4()));
    std::fs::write(&path, text).unwrap();
    let output = Command::new(BIN)
        .args(["check", "--config", path.to_str().unwrap()])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(path);
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn issue_36_item_4_check_names_a_bad_next_key_by_its_setting() {
    let key = key_file(false);
    let quoted = format!("{:?}", key.display().to_string());
    let garbage = std::env::temp_dir().join(format!("bcp-webhook-{}.pem", uuid::Uuid::new_v4()));
    std::fs::write(&garbage, "not a key").unwrap();
    let section =
        |extra: &str| format!("[order_webhooks]\nenabled = true\nkey_file = {quoted}\n{extra}");

    let (ok, out) = check(&section(&format!(
        "next_key_file = {:?}\n",
        garbage.display().to_string()
    )));
    assert!(!ok);
    assert!(out.contains("- order_webhooks.next_key_file:"), "{out}");
    assert!(out.contains("no PEM private key"), "{out}");
    assert!(
        !out.contains("not a key"),
        "the file is never quoted: {out}"
    );

    // The signing key again as the next one: one kid for two roles.
    let (ok, out) = check(&section(&format!("next_key_file = {quoted}\n")));
    assert!(!ok);
    assert!(out.contains("- order_webhooks.next_key_id:"), "{out}");

    let (ok, out) = check(&format!("[order_webhooks]\nnext_key_file = {quoted}\n"));
    assert!(!ok);
    assert!(out.contains("- order_webhooks.next_key_file:"), "{out}");

    let (ok, out) = check(&section(
        "next_key = { env = \"BCP_TEST_UNSET_NEXT_KEY\" }\n",
    ));
    assert!(!ok);
    assert!(out.contains("- order_webhooks.next_key:"), "{out}");
    let other = key_file(true);
    let other_quoted = format!("{:?}", other.display().to_string());
    let (ok, out) = check(&section(&format!(
        "next_key_file = {other_quoted}\nnext_key_id = \"a\\\"b\"\n"
    )));
    assert!(!ok);
    assert!(out.contains("- order_webhooks.next_key_id:"), "{out}");

    let (ok, out) = check(&section("claim_timeout_ms = 10\n"));
    assert!(!ok);
    assert!(out.contains("- order_webhooks.claim_timeout_ms:"), "{out}");

    // A distinct next key is accepted.
    let (ok, out) = check(&section(&format!("next_key_file = {other_quoted}\n")));
    assert!(ok, "{out}");
    for file in [key, garbage, other] {
        let _ = std::fs::remove_file(file);
    }
}
