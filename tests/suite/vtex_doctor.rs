//! `doctor` on a VTEX store (issue 37 item 3): the fields a Brazilian store's checkout
//! requires beyond the cart's (the buyer's document in `clientProfileData`, the address's
//! number and neighbourhood) and which of them the bridge fills, as for WooCommerce.
#![allow(clippy::unwrap_used)]

use crate::support::vtex_standin::VtexStandin;

#[tokio::test]
async fn issue_37_doctor_lists_a_brazilian_vtex_stores_required_fields() {
    let vtex = VtexStandin::start().await;
    let config = bcp_bridge::startup::BridgeConfig::from_toml(&vtex.config("")).unwrap();
    let report = bcp_bridge::doctor::run(&config, false).await;
    let check = report
        .checks
        .iter()
        .find(|check| check.name == "checkout fields")
        .unwrap_or_else(|| panic!("{}", report.render()));
    assert!(check.passed, "{}", check.detail);
    for listed in [
        "clientProfileData.document (CPF/CNPJ, required): filled from buyer.taxpayer_id",
        "shippingData.address.number (Number, required): filled from the address's house number",
        "shippingData.address.neighborhood (Neighborhood, required): filled from the address's bairro",
        "clientProfileData.corporateName (Company name, optional): not filled",
    ] {
        assert!(
            check.detail.contains(listed),
            "{listed} not in {}",
            check.detail
        );
    }
    // The store's page itself is not written: doctor only reads a new, empty orderForm.
    assert!(
        vtex.requests()
            .iter()
            .filter(|request| request.contains("/orderForm"))
            .all(|request| request.starts_with("GET ")),
        "{:?}",
        vtex.requests()
    );
}
