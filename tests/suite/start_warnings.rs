//! Issue 35 item 3: the start-up warnings, read from the log of the real binary (`serve
//! --log-json`) and from `check`, each present when its condition holds and absent otherwise.
//! A warning never changes how the bridge starts nor `check`'s exit code.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::binary::{BIN, Running, logged_endpoint};

/// A fresh directory for one case's files.
fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bcp-startup-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(path: &Path, text: &str, mode: u32) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// `(key, message)` of every warning `serve` logged before it was ready, and the whole log.
fn served(config: &Path, listen: &str) -> (Vec<(String, String)>, String) {
    let log = config.with_extension("log");
    let mut bridge = Running::start_logging_to(
        &[
            "--log-json",
            "serve",
            "--config",
            config.to_str().unwrap(),
            "--listen",
            listen,
        ],
        &log,
    );
    // Warnings are logged before the banner, which says the bridge is serving.
    logged_endpoint(&log);
    let _ = bridge.child.kill();
    let text = std::fs::read_to_string(&log).unwrap();
    let warnings = text
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|line| line["level"] == "WARN" && line["target"] == "bcp_bridge::startup::start")
        .map(|line| {
            (
                line["fields"]["key"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                line["fields"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    (warnings, text)
}

fn keys(warnings: &[(String, String)]) -> Vec<&str> {
    warnings.iter().map(|(key, _)| key.as_str()).collect()
}

/// `check`'s output: it still passes (exit 0), warnings or not.
fn checked(config: &Path) -> String {
    let output = Command::new(BIN)
        .args(["check", "--config", config.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(0), "{text}");
    text
}

const QUIET: &str = "[negotiation]\nenabled = false\n";
/// Listening on every interface (`check` reads this; `serve` is given `--listen`).
const PUBLIC: &str =
    "[server]\nlisten = \"0.0.0.0:8080\"\npublic_base_url = \"https://shop.example\"\n";

#[test]
fn reachable_beyond_loopback_without_token_or_budget_is_warned_about() {
    let dir = scratch();
    let budgets_off = "[inbound]\nper_ip_per_minute = 0\nper_agent_per_minute = 0\n";
    let open = dir.join("open.toml");
    write(&open, &format!("{PUBLIC}{QUIET}{budgets_off}"), 0o600);
    let (warnings, _) = served(&open, "0.0.0.0:0");
    assert_eq!(keys(&warnings), ["server.listen"], "{warnings:?}");
    assert!(warnings[0].1.contains("beyond loopback"), "{warnings:?}");
    assert!(checked(&open).contains("warning: server.listen:"));

    // On loopback nothing beyond the machine reaches it.
    let (warnings, _) = served(&open, "127.0.0.1:0");
    assert!(warnings.is_empty(), "{warnings:?}");
    // The default budgets, or a bearer token, close it.
    let defaults = dir.join("defaults.toml");
    write(&defaults, &format!("{PUBLIC}{QUIET}"), 0o600);
    let (warnings, _) = served(&defaults, "0.0.0.0:0");
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(!checked(&defaults).contains("  warning: "));
    let tokened = dir.join("tokened.toml");
    let digest = "0".repeat(64);
    write(
        &tokened,
        &format!("{PUBLIC}{QUIET}{budgets_off}[access]\nbearer_token_sha256 = [\"{digest}\"]\n"),
        0o600,
    );
    let (warnings, _) = served(&tokened, "0.0.0.0:0");
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn an_allow_list_without_enforced_signatures_is_warned_about() {
    let dir = scratch();
    let listed = "[access]\nallowed_profiles = [\"https://agent.example/profile.json\"]\n";
    let advisory = dir.join("advisory.toml");
    write(&advisory, &format!("{QUIET}{listed}"), 0o600);
    let (warnings, _) = served(&advisory, "127.0.0.1:0");
    assert_eq!(keys(&warnings), ["access.allowed_profiles"], "{warnings:?}");
    assert!(warnings[0].1.contains("enforce"), "{warnings:?}");
    assert!(checked(&advisory).contains("warning: access.allowed_profiles:"));

    let enforced = dir.join("enforced.toml");
    write(
        &enforced,
        &format!("{QUIET}{listed}[signatures]\nmode = \"enforce\"\n"),
        0o600,
    );
    let (warnings, _) = served(&enforced, "127.0.0.1:0");
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(!checked(&enforced).contains("  warning: "));
}

#[test]
fn secrets_in_files_others_can_read_are_warned_about_never_shown() {
    let dir = scratch();
    let secret = "whsec_start_warnings_do_not_print";
    let config = dir.join("bridge.toml");
    let text = format!("{QUIET}[cache]\nwebhook_secret = \"{secret}\"\n");
    write(&config, &text, 0o644);
    let (warnings, log) = served(&config, "127.0.0.1:0");
    assert_eq!(keys(&warnings), ["(file)"], "{warnings:?}");
    let message = &warnings[0].1;
    assert!(message.contains(config.to_str().unwrap()), "{message}");
    assert!(message.contains("cache.webhook_secret"), "{message}");
    assert!(
        message.contains("0644") && message.contains("chmod 600"),
        "{message}"
    );
    let shown = checked(&config);
    assert!(shown.contains("warning: (file):"), "{shown}");
    assert!(!log.contains(secret) && !shown.contains(secret));

    write(&config, &text, 0o600);
    let (warnings, _) = served(&config, "127.0.0.1:0");
    assert!(warnings.is_empty(), "{warnings:?}");
    // Every secret from the environment (as deploy/bridge.toml): nothing in it to protect.
    let from_env = dir.join("from-env.toml");
    write(
        &from_env,
        &format!("{QUIET}[cache]\nwebhook_secret = {{ env = \"PATH\" }}\n"),
        0o644,
    );
    assert!(!checked(&from_env).contains("  warning: "));

    // A key file: the order webhooks' signing key.
    let key = dir.join("signing.pem");
    let pem = rcgen::KeyPair::generate().unwrap().serialize_pem();
    write(&key, &pem, 0o640);
    let signing = dir.join("signing.toml");
    write(
        &signing,
        &format!("{QUIET}[order_webhooks]\nenabled = true\nkey_file = {key:?}\n"),
        0o600,
    );
    let (warnings, log) = served(&signing, "127.0.0.1:0");
    assert_eq!(keys(&warnings), ["order_webhooks.key_file"], "{warnings:?}");
    assert!(warnings[0].1.contains("0640"), "{warnings:?}");
    assert!(!log.contains("PRIVATE KEY"));
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(!checked(&signing).contains("  warning: "));
}
