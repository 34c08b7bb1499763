//! The stand-in's Brazilian parts, shaped like VTEX's OpenAPI files
//! (`br-platforms/vtex/openapi/`): `clientProfileData`'s document fields (`document`,
//! `documentType`, `isCorporate`, `corporateDocument`, `corporateName`), the address's
//! `number`, `complement` and `neighborhood` (kept as attached), `GET
//! /api/checkout/pub/postal-code/{country}/{postalCode}` (a CEP the stand-in does not know
//! answers 200 with empty fields, as VTEX does), and the Orders API's `GET
//! /api/oms/pvt/orders/{orderId}` (app key required) with `packageAttachment.packages[]`
//! invoices. The tee's offers carry card `Installments` and a cash `spotPrice`.

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use super::catalog::{Entry, TEE};
use super::{Inner, VtexStandin, json_response, vtex_error};

/// A CEP the store's postal-code route knows: (CEP, street, bairro, city, state).
pub const CEP: (&str, &str, &str, &str, &str) =
    ("13015081", "Rua Doutor Quirino", "Centro", "Campinas", "SP");
/// The CEP of the tests' "Rua Augusta 100" (`values::sao_paulo`).
pub const AUGUSTA: (&str, &str, &str, &str, &str) =
    ("01305000", "Rua Augusta", "Consolação", "São Paulo", "SP");

/// A document the store refuses at `clientProfileData` (its anti-fraud list, say).
pub const REFUSED_CPF: &str = "11144477735";

/// The tee (R$ 59,90): 1x and 3x interest-free, 6x with interest, R$ 56,90 in cash/Pix.
fn payment_terms() -> Value {
    json!([
        {"Value": 59.90, "InterestRate": 0.0, "TotalValuePlusInterestRate": 59.90, "NumberOfInstallments": 1,
         "PaymentSystemName": "Visa", "PaymentSystemGroupName": "creditCardPaymentGroup", "Name": "Visa à vista"},
        {"Value": 19.96, "InterestRate": 0.0, "TotalValuePlusInterestRate": 59.90, "NumberOfInstallments": 3,
         "PaymentSystemName": "Visa", "PaymentSystemGroupName": "creditCardPaymentGroup", "Name": "Visa 3 vezes sem juros"},
        {"Value": 10.68, "InterestRate": 1.99, "TotalValuePlusInterestRate": 64.08, "NumberOfInstallments": 6,
         "PaymentSystemName": "Visa", "PaymentSystemGroupName": "creditCardPaymentGroup", "Name": "Visa 6 vezes com juros"},
        {"Value": 59.90, "InterestRate": 0.0, "TotalValuePlusInterestRate": 59.90, "NumberOfInstallments": 1,
         "PaymentSystemName": "Pix", "PaymentSystemGroupName": "instantPaymentPaymentGroup", "Name": "Pix à vista"}
    ])
}

pub fn add_payment_terms(entries: &mut [Entry]) {
    for entry in entries
        .iter_mut()
        .filter(|entry| entry.product["productId"] == TEE)
    {
        for item in entry.product["items"].as_array_mut().unwrap() {
            let offer = &mut item["sellers"][0]["commertialOffer"];
            offer["Installments"] = payment_terms();
            offer["spotPrice"] = serde_json::from_str("56.90").unwrap();
        }
    }
}

/// An order the buyer placed on the store's page, as the Orders API answers it.
pub struct PlacedOrder {
    pub id: String,
    pub body: Value,
}

fn keyed(headers: &HeaderMap) -> bool {
    headers.contains_key("x-vtex-api-appkey") && headers.contains_key("x-vtex-api-apptoken")
}

impl Inner {
    /// `Some` is the store's refusal of the document.
    pub fn refuse_document(&self, request: &Value) -> Option<Response> {
        (request["document"] == REFUSED_CPF).then(|| {
            vtex_error(
                StatusCode::BAD_REQUEST,
                "CHK0080",
                "O documento informado não é válido",
            )
        })
    }

    pub fn postal_code(&self, country: &str, cep: &str) -> Response {
        let known = [CEP, AUGUSTA]
            .into_iter()
            .find(|known| country == "BRA" && cep == known.0);
        let (street, neighborhood, city, state) = match known {
            Some((_, street, bairro, city, state)) => (street, bairro, city, state),
            None => ("", "", "", ""),
        };
        json_response(
            StatusCode::OK,
            &json!({
                "postalCode": cep, "city": city, "state": state, "country": country,
                "street": street, "number": "", "neighborhood": neighborhood, "complement": "",
                "reference": "", "geoCoordinates": []
            }),
            &[],
        )
    }

    pub fn oms_order(&self, id: &str, headers: &HeaderMap) -> Response {
        if !keyed(headers) {
            return vtex_error(StatusCode::UNAUTHORIZED, "ORD062", "Unauthorized");
        }
        match self.orders.iter().find(|order| order.id == id) {
            Some(order) => json_response(StatusCode::OK, &order.body, &[]),
            None => vtex_error(StatusCode::NOT_FOUND, "ORD001", "Pedido não encontrado"),
        }
    }

    /// `GET /api/oms/pvt/orders?q=…`: the newest first, `q` matched against the buyer's email
    /// or document as VTEX's full-text filter does; the list items carry no `orderFormId`.
    pub fn oms_list(&self, query: &str, headers: &HeaderMap) -> Response {
        if !keyed(headers) {
            return vtex_error(StatusCode::UNAUTHORIZED, "ORD062", "Unauthorized");
        }
        let params: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        let param = |name: &str| {
            params
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.clone())
        };
        let q = param("q").unwrap_or_default();
        let per_page: usize = param("per_page")
            .and_then(|value| value.parse().ok())
            .unwrap_or(15);
        let list: Vec<Value> = self
            .orders
            .iter()
            .rev()
            .filter(|order| {
                let profile = &order.body["clientProfileData"];
                q.is_empty() || profile["email"] == q.as_str() || profile["document"] == q.as_str()
            })
            .take(per_page)
            .map(|order| {
                json!({"orderId": order.id, "creationDate": order.body["creationDate"],
                    "status": order.body["status"], "totalValue": order.body["value"],
                    "sequence": order.body["sequence"], "currencyCode": "BRL"})
            })
            .collect();
        let total = list.len();
        json_response(
            StatusCode::OK,
            &json!({"list": list, "paging": {"total": total, "pages": 1, "currentPage": 1, "perPage": per_page}}),
            &[],
        )
    }
}

impl VtexStandin {
    /// The buyer pays for an orderForm on the store's page: the Orders API now holds its order.
    pub fn pay(&self, form_id: &str) -> String {
        let form = self.form(form_id);
        let mut inner = self.inner.lock().unwrap();
        let id = format!("{}-01", 1_468_780_500_454u64 + inner.orders.len() as u64);
        let body = json!({
            "orderId": id, "sequence": id.trim_end_matches("-01"), "orderFormId": form_id,
            "status": "ready-for-handling", "value": form["value"],
            "creationDate": "2026-12-07T15:00:00.0000000+00:00",
            "items": form["items"], "totals": form["totalizers"],
            "clientProfileData": form["clientProfileData"],
            "shippingData": {"address": form["shippingData"]["address"]},
            "storePreferencesData": form["storePreferencesData"],
            "marketingData": form["marketingData"],
            "packageAttachment": {"packages": []}
        });
        inner.orders.push(PlacedOrder {
            id: id.clone(),
            body,
        });
        id
    }

    /// The merchant's ERP invoiced the order: one output package with its NF-e.
    pub fn invoice(&self, order_id: &str, key: &str, url: &str) {
        let mut inner = self.inner.lock().unwrap();
        let order = inner
            .orders
            .iter_mut()
            .find(|order| order.id == order_id)
            .unwrap();
        let value = order.body["value"].clone();
        order.body["status"] = json!("invoiced");
        order.body["packageAttachment"]["packages"]
            .as_array_mut()
            .unwrap()
            .push(json!({
                "items": [], "courier": null, "invoiceNumber": "1235", "invoiceValue": value,
                "invoiceUrl": url, "issuanceDate": "2026-12-08T10:00:00.0000000+00:00",
                "trackingNumber": null, "invoiceKey": key, "trackingUrl": null,
                "embeddedInvoice": "", "type": "Output", "courierStatus": null
            }));
    }

    /// `selectedAddresses[0]` as the bridge attached it.
    pub fn address_of(&self, id: &str) -> Option<Value> {
        let inner = self.inner.lock().unwrap();
        inner.forms.get(id).and_then(|form| form.address.clone())
    }
}
