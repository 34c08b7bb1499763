//! No personal data in any log line at any level (issue 27 item 4): a whole flow on the
//! sample store (cart with buyer and attribution, checkout, address, option, completion) at
//! `RUST_LOG=trace`, through the front and through rmcp (whose request and response lines
//! would carry every argument and answer), and the whole log searched for each detail.

use serde_json::json;

use crate::support::debug_bridge::DebugBridge;
use crate::support::values::{key, line};
use crate::support::{meta, meta_with_key};

const SANDAL: &str = "prod_chinelo_praia_azm_3334";

/// The test buyer: every detail is a string no other line of a log could hold by chance.
const NAME: &str = "Genoveva";
const SURNAME: &str = "Quixabeira";
const EMAIL: &str = "genoveva.q@example.com";
const PHONE: &str = "+5511987650123";
const STREET: &str = "Rua Zulmira Tavares 4321";
const CITY: &str = "Itaquaquecetuba";
const POSTAL: &str = "08599-777";
const CAMPAIGN: &str = "campanha-xanadu-7781";

async fn whole_flow(bridge: &mut DebugBridge) {
    let buyer =
        json!({"first_name": NAME, "last_name": SURNAME, "email": EMAIL, "phone_number": PHONE});
    let cart = bridge
        .call(
            "create_cart",
            json!({"meta": meta_with_key(&key()), "cart": {
                "line_items": [line(SANDAL, 2)],
                "buyer": buyer,
                "attribution": {"utm_campaign": CAMPAIGN, "referrer": format!("https://{CAMPAIGN}.example")}
            }}),
        )
        .await;
    let cart_id = cart["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{cart}"))
        .to_owned();
    let created = bridge
        .call(
            "create_checkout",
            json!({"meta": meta_with_key(&key()), "checkout": {"cart_id": cart_id, "buyer": buyer}}),
        )
        .await;
    let id = created["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    bridge
        .call(
            "update_checkout",
            json!({"meta": meta(), "id": id, "checkout": {"fulfillment": {"methods": [{"type": "shipping", "destinations": [{
                "first_name": NAME, "last_name": SURNAME, "street_address": STREET,
                "address_locality": CITY, "address_region": "SP", "postal_code": POSTAL,
                "address_country": "BR", "phone_number": PHONE
            }]}]}}}),
        )
        .await;
    bridge
        .call(
            "update_checkout",
            json!({"meta": meta(), "id": id, "checkout": {"fulfillment": {"methods": [{"id": "ful_1", "groups": [{"id": "grp_1", "selected_option_id": "pac"}]}]}}}),
        )
        .await;
    bridge
        .call("get_checkout", json!({"meta": meta(), "id": id}))
        .await;
    let completed = bridge
        .call(
            "complete_checkout",
            json!({"meta": meta_with_key(&key()), "id": id, "checkout": {"payment": {"instruments": [{"handler_id": "sample_test_approve"}]}}}),
        )
        .await;
    assert_eq!(completed["status"], "completed", "{completed}");
    // The answer carries the buyer (it is theirs): the log must not.
    assert_eq!(completed["buyer"]["email"], EMAIL, "{completed}");
}

const SECRETS: [&str; 8] = [NAME, SURNAME, EMAIL, PHONE, STREET, CITY, POSTAL, CAMPAIGN];

#[tokio::test]
async fn a_whole_flow_at_trace_through_the_front_logs_no_buyer_detail() {
    let mut bridge = DebugBridge::start_at("trace-front", "", "trace");
    whole_flow(&mut bridge).await;
    bridge.assert_log_holds_none(&SECRETS);
}

#[tokio::test]
async fn a_whole_flow_at_trace_through_rmcp_logs_no_buyer_detail() {
    let mut bridge = DebugBridge::start_at("trace-rmcp", "", "trace");
    bridge.through_rmcp();
    whole_flow(&mut bridge).await;
    bridge.assert_log_holds_none(&SECRETS);
}
