//! The stand-in's checkout attachments, shaped like the Checkout API's examples
//! (`attachments/shippingData`'s answer: `shippingData.logisticsInfo[].slas[]` with prices in
//! cents per item, `pickup-in-point` SLAs with `pickupStoreInfo`; `coupons`' answer:
//! `marketingData.coupon`, promotions in `ratesAndBenefitsData` and the items' `priceTags`).
//! Every attachment answers the whole orderForm, as VTEX does. Without `logisticsInfo`, an
//! address gets the best delivery SLA selected (never a pickup), as the API documents.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use super::{Inner, vtex_error};

/// 10 % off every line while applied.
pub const CODE: &str = "BEMVINDO10";
pub const EXPIRED_CODE: &str = "VERAO2025";
pub const PROMOTION: &str = "b1e9f0c2-promo-bemvindo";
pub const PICKUP_POINT: &str = "1_LOJACENTRO";

/// `(id, name, channel, price per unit in cents, estimate)`, best delivery first.
const SLAS: &[(&str, &str, &str, i64, &str)] = &[
    ("Normal", "Normal", "delivery", 1500, "5bd"),
    ("Expressa", "Expressa", "delivery", 3000, "1bd"),
    (
        "Retirada (Loja Centro)",
        "Retirada (Loja Centro)",
        "pickup-in-point",
        0,
        "0bd",
    ),
];

fn sla_json(sla: &(&str, &str, &str, i64, &str), quantity: u32) -> Value {
    let (id, name, channel, price, estimate) = *sla;
    let price = price * i64::from(quantity);
    let mut out = json!({
        "id": id, "deliveryChannel": channel, "name": name,
        "deliveryIds": [{"courierId": "1", "warehouseId": "1_1", "dockId": "1", "courierName": name, "quantity": quantity, "kitItemDetails": []}],
        "shippingEstimate": estimate, "shippingEstimateDate": null, "lockTTL": null,
        "availableDeliveryWindows": [], "deliveryWindow": null,
        "price": price, "listPrice": price, "tax": 0,
        "pickupStoreInfo": {"isPickupStore": false, "friendlyName": null, "address": null, "additionalInfo": null, "dockId": null},
        "pickupPointId": null, "pickupDistance": 0, "polygonName": null, "transitTime": estimate
    });
    if channel == "pickup-in-point" {
        out["pickupStoreInfo"] = json!({
            "isPickupStore": true, "friendlyName": "Loja Centro",
            "address": {"addressType": "pickup", "receiverName": null, "addressId": "LOJACENTRO", "isDisposable": true,
                "postalCode": "01002-000", "city": "São Paulo", "state": "SP", "country": "BRA",
                "street": "Rua Direita", "number": "250", "neighborhood": "Sé", "complement": null,
                "reference": null, "geoCoordinates": [-46.6355, -23.5489]},
            "additionalInfo": "Retire com documento", "dockId": "1"
        });
        out["pickupPointId"] = json!(PICKUP_POINT);
    }
    out
}

impl Inner {
    pub fn attach_profile(&mut self, id: &str, request: &Value) {
        let form = self.forms.get_mut(id).unwrap();
        if let Some(fields) = request.as_object() {
            for (key, value) in fields {
                form.profile.insert(key.clone(), value.clone());
            }
        }
    }

    /// `Some` is the refusal of an SLA the item is not offered.
    pub fn attach_shipping(&mut self, id: &str, request: &Value) -> Option<Response> {
        let form = self.forms.get_mut(id).unwrap();
        if let Some(address) = request["selectedAddresses"]
            .as_array()
            .and_then(|a| a.first())
        {
            if form.address.as_ref() != Some(address) {
                // A new address prices again: every selection goes back to the best delivery.
                for line in &mut form.lines {
                    line.sla = None;
                }
            }
            form.address = Some(address.clone());
        }
        for info in request["logisticsInfo"]
            .as_array()
            .cloned()
            .unwrap_or_default()
        {
            let index = info["itemIndex"].as_u64().unwrap_or(u64::MAX) as usize;
            let Some(line) = form.lines.get_mut(index) else {
                return Some(vtex_error(
                    StatusCode::BAD_REQUEST,
                    "CHK0041",
                    "Índice do item inválido",
                ));
            };
            if let Some(sla) = info["selectedSla"].as_str() {
                if !SLAS.iter().any(|known| known.0 == sla) {
                    return Some(vtex_error(
                        StatusCode::BAD_REQUEST,
                        "CHK0090",
                        "SLA selecionado inválido",
                    ));
                }
                line.sla = Some(sla.to_owned());
            }
        }
        None
    }

    pub fn apply_coupon(&mut self, id: &str, request: &Value) {
        let text = request["text"].as_str().unwrap_or("").trim().to_owned();
        if text.is_empty() {
            self.forms.get_mut(id).unwrap().coupon = None;
        } else if text.eq_ignore_ascii_case(CODE) {
            self.forms.get_mut(id).unwrap().coupon = Some(CODE.to_owned());
        } else if text.eq_ignore_ascii_case(EXPIRED_CODE) {
            self.message(
                id,
                "couponExpired",
                format!("O cupom {text} expirou."),
                "error",
            );
        } else {
            self.message(
                id,
                "couponNotFound",
                format!("O código de cupom {text} não é válido."),
                "error",
            );
        }
    }

    /// Profile, shipping and promotions on top of the items and totals `form_json` made.
    pub fn checkout_parts(&self, id: &str, body: &mut Value) {
        let form = &self.forms[id];
        let profile = &mut body["clientProfileData"];
        for key in [
            "email",
            "firstName",
            "lastName",
            "document",
            "documentType",
            "phone",
            "isCorporate",
            "corporateDocument",
            "corporateName",
        ] {
            profile[key] = form.profile.get(key).cloned().unwrap_or(Value::Null);
        }
        let mut discounts = 0i64;
        if form.coupon.is_some() {
            for item in body["items"].as_array_mut().unwrap() {
                let total = item["priceDefinition"]["total"].as_i64().unwrap();
                let off = total / 10;
                discounts -= off;
                item["priceTags"] = json!([{
                    "name": format!("discount@price-{PROMOTION}#a1b2c3"),
                    "value": -off, "rawValue": -(off as f64) / 100.0,
                    "isPercentual": false, "identifier": PROMOTION
                }]);
                item["priceDefinition"]["total"] = json!(total - off);
            }
            body["marketingData"] = json!({
                "utmSource": null, "utmMedium": null, "utmCampaign": null, "utmipage": null,
                "utmiPart": null, "utmiCampaign": null, "coupon": CODE, "marketingTags": []
            });
            body["ratesAndBenefitsData"] = json!({
                "rateAndBenefitsIdentifiers": [{
                    "id": PROMOTION, "name": "Bem-vindo 10%", "featured": false,
                    "description": null, "matchedParameters": {"couponCode@Marketing": CODE},
                    "additionalInfo": null
                }],
                "teaser": []
            });
        }
        let mut shipping = None;
        if let Some(address) = &form.address {
            let mut logistics = Vec::new();
            let mut total = 0i64;
            for (index, line) in form.lines.iter().enumerate() {
                let selected = line.sla.clone().unwrap_or_else(|| SLAS[0].0.to_owned());
                let slas: Vec<Value> = SLAS
                    .iter()
                    .map(|sla| sla_json(sla, line.quantity))
                    .collect();
                let chosen = slas
                    .iter()
                    .find(|sla| sla["id"] == selected.as_str())
                    .unwrap();
                total += chosen["price"].as_i64().unwrap();
                logistics.push(json!({
                    "itemIndex": index, "selectedSla": selected,
                    "selectedDeliveryChannel": chosen["deliveryChannel"],
                    "addressId": address["addressId"], "slas": slas, "shipsTo": ["BRA"],
                    "itemId": line.sku,
                    "deliveryChannels": [{"id": "pickup-in-point"}, {"id": "delivery"}]
                }));
            }
            shipping = Some(total);
            body["shippingData"] = json!({
                "address": address, "logisticsInfo": logistics,
                "selectedAddresses": [address], "availableAddresses": [address],
                "pickupPoints": []
            });
        }
        let items: i64 = body["totalizers"]
            .as_array()
            .and_then(|totals| totals.iter().find(|total| total["id"] == "Items"))
            .and_then(|total| total["value"].as_i64())
            .unwrap_or(0);
        let mut totalizers = body["totalizers"].as_array().cloned().unwrap_or_default();
        if discounts != 0 {
            totalizers.push(
                json!({"id": "Discounts", "name": "Total dos Descontos", "value": discounts}),
            );
        }
        if let Some(shipping) = shipping {
            totalizers.push(json!({"id": "Shipping", "name": "Total do Frete", "value": shipping}));
        }
        body["totalizers"] = json!(totalizers);
        body["value"] = json!(items + discounts + shipping.unwrap_or(0));
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn reais(cents: i64) -> String {
    format!("R$ {},{:02}", cents / 100, cents % 100)
}

impl Inner {
    /// `GET /checkout/?orderFormId=…`: the store's checkout page for an orderForm (the
    /// `#/payment` step is the browser's fragment), rendered from the form's own items and
    /// value as the real page renders them: one row per item (name, quantity, line total) and
    /// the total the buyer will pay.
    pub fn checkout_page(&self, query: &str) -> Response {
        let id = url::form_urlencoded::parse(query.as_bytes())
            .find(|(key, _)| key == "orderFormId")
            .map(|(_, value)| value.into_owned())
            .filter(|id| self.forms.contains_key(id));
        let Some(id) = id else {
            return Response::builder()
                .status(StatusCode::NOT_FOUND)
                .header("content-type", "text/html; charset=utf-8")
                .body(axum::body::Body::from(
                    "<!doctype html><title>Carrinho</title><p>Seu carrinho está vazio.</p>",
                ))
                .unwrap();
        };
        let form = self.form_json(&id, true);
        let rows: String = form["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| {
                format!(
                    "<tr data-item><td class=\"name\">{}</td><td class=\"quantity\">{}</td><td class=\"price\">{}</td></tr>",
                    escape(item["name"].as_str().unwrap_or("")),
                    item["quantity"],
                    reais(item["priceDefinition"]["total"].as_i64().unwrap_or(0))
                )
            })
            .collect();
        let total = form["value"].as_i64().unwrap_or(0);
        let html = format!(
            "<!doctype html><html lang=\"pt-BR\"><head><meta charset=\"utf-8\"><title>Checkout</title></head>\
             <body><h1>Pagamento</h1><table><thead><tr><th>Produto</th><th>Qtd.</th><th>Valor</th></tr></thead>\
             <tbody>{rows}</tbody></table><p data-total=\"{total}\">Total: {}</p></body></html>",
            reais(total)
        );
        Response::builder()
            .status(StatusCode::OK)
            .header("content-type", "text/html; charset=utf-8")
            .body(axum::body::Body::from(html))
            .unwrap()
    }
}
