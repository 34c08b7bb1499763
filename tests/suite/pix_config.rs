//! Issue 38 item 1: `[pix]` checked by `check` (each bad value named by its key) and by
//! `doctor` (a token obtained over mutual TLS, the webhook registration read), without a
//! secret in either's words.

use bcp_bridge::doctor;
use bcp_bridge::startup::{BridgeConfig, ConfigError};

use crate::support::binary::BIN;
use crate::support::pix_psp::{CLIENT_ID, CLIENT_SECRET, PixPsp};

fn problem_keys(toml: &str) -> Vec<String> {
    match BridgeConfig::from_toml(toml) {
        Err(ConfigError::Invalid(problems)) => problems.into_iter().map(|p| p.key).collect(),
        other => panic!("expected problems, got {other:?}"),
    }
}

#[tokio::test]
async fn the_stand_ins_pix_section_is_valid_with_its_defaults() {
    let psp = PixPsp::start().await;
    let config = BridgeConfig::from_toml(&psp.pix_toml()).unwrap();
    let pix = config.pix.unwrap();
    assert_eq!(pix.expires_secs, 1800);
    assert_eq!(pix.handler_id, "pix");
    assert!(BridgeConfig::from_toml("").unwrap().pix.is_none());
}

#[tokio::test]
async fn issue_38_check_names_each_bad_pix_key() {
    let psp = PixPsp::start().await;
    let good = psp.pix_toml();
    let cases = [
        (
            "api_url = \"",
            "api_url = \"http://psp.example.com/v2\" #",
            "pix.api_url",
        ),
        (
            "token_url = \"",
            "token_url = \"ftp://127.0.0.1/t\" #",
            "pix.token_url",
        ),
        (
            "client_cert = \"",
            "client_cert = \"/nonexistent/cert.pem\" #",
            "pix.client_cert",
        ),
        (
            "ca_cert = \"",
            "ca_cert = \"/etc/hostname\" #",
            "pix.ca_cert",
        ),
        ("\nkey = \"", "\nkey = \"not a key\" #", "pix.key"),
        ("\nkey = \"", "\nkey = \"+5511\" #", "pix.key"),
        ("\nkey = \"", "\nkey = \"123.456.789-09\" #", "pix.key"),
    ];
    for (find, replace, key) in cases {
        let toml = good.replacen(find, replace, 1);
        assert!(
            problem_keys(&toml).contains(&key.to_owned()),
            "{key}: {toml}"
        );
    }
    // The key file holds a certificate, not a key.
    let toml = good.replace(
        &psp.pki.client_key.display().to_string(),
        &psp.pki.ca_cert.display().to_string(),
    );
    assert_eq!(problem_keys(&toml), ["pix.client_key"]);
    // A key that is not the certificate's.
    let toml = good.replace(
        &psp.pki.client_key.display().to_string(),
        &psp.pki.stranger_key.display().to_string(),
    );
    assert_eq!(problem_keys(&toml), ["pix.client_key"]);
    let toml =
        format!("{good}expires_secs = 5\nhandler_id = \"pix handler\"\ntxid_secret = \"short\"\n");
    let keys = problem_keys(&toml);
    for key in ["pix.expires_secs", "pix.handler_id", "pix.txid_secret"] {
        assert!(keys.contains(&key.to_owned()), "{key}: {keys:?}");
    }
    let keys = problem_keys(&format!("{good}colour = 1\n"));
    assert_eq!(keys, ["pix.colour"]);
    for valid in [
        "52998224725",
        "19131243000197",
        "loja@example.com.br",
        "+5511987650123",
    ] {
        let toml = good.replacen("\nkey = \"", &format!("\nkey = \"{valid}\" #"), 1);
        assert!(BridgeConfig::from_toml(&toml).is_ok(), "{valid}");
    }
}

#[tokio::test]
async fn issue_38_doctor_obtains_a_token_and_reads_the_webhook() {
    let psp = PixPsp::start().await;
    let config = BridgeConfig::from_toml(&psp.pix_toml()).unwrap();
    let report = doctor::run(&config, false).await;
    let text = report.render();
    let passed = |name: &str| report.checks.iter().any(|c| c.name == name && c.passed);
    assert!(passed("pix token"), "{text}");
    assert!(
        passed("pix webhook") && text.contains("none registered"),
        "{text}"
    );
    assert_eq!(psp.calls("POST /token"), 1);
    assert_eq!(psp.calls("GET /webhook"), 1);
    for secret in [CLIENT_ID, CLIENT_SECRET, "psp-token-"] {
        assert!(!text.contains(secret), "{secret}: {text}");
    }

    let wrong = psp.pix_toml().replace(CLIENT_SECRET, "not-the-secret-1234");
    let report = doctor::run(&BridgeConfig::from_toml(&wrong).unwrap(), false).await;
    let text = report.render();
    assert!(!report.agent_could_shop(), "{text}");
    assert!(
        text.contains("FAIL  pix token") && text.contains("pix.client_secret"),
        "{text}"
    );
    assert!(!text.contains("not-the-secret"), "{text}");
}

#[tokio::test]
async fn doctor_from_the_command_line_names_the_registered_webhook() {
    let psp = PixPsp::start().await;
    let client = bcp_bridge::pix::ApiPix::new(
        &BridgeConfig::from_toml(&psp.pix_toml())
            .unwrap()
            .pix
            .unwrap(),
        std::time::Duration::from_secs(10),
    )
    .unwrap();
    client
        .register_webhook("https://shop.example/bcp/pix-webhook")
        .await
        .unwrap();
    let path = psp.pki.dir.join("bridge.toml");
    std::fs::write(&path, psp.pix_toml()).unwrap();
    let output = tokio::process::Command::new(BIN)
        .args(["doctor", "--config"])
        .arg(&path)
        .env("RUST_LOG", "trace")
        .output()
        .await
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        all.contains("https://shop.example/bcp/pix-webhook/pix"),
        "{all}"
    );
    for secret in [CLIENT_ID, CLIENT_SECRET, "psp-token-"] {
        assert!(!all.contains(secret), "{secret}: {all}");
    }
}
