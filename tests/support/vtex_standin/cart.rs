//! The stand-in's orderForms, shaped like VTEX's Checkout examples
//! (`fixtures/checkout-orderForm-new.json`, items like `checkout-orderForm-get.json`'s): a new
//! cart sets the `CheckoutOrderFormOwnership` cookie; without it profile data is masked and
//! writes are refused (CHK003); item problems come back inside HTTP 200 as `messages[]` with
//! clamped quantities; `PATCH items` and `items/update` apply their `orderItems` one after the
//! other, so a removal shifts the indexes of the lines after it.

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use rust_decimal::Decimal;
use serde_json::{Value, json};

use super::catalog::offer_price;
use super::{Inner, json_response, vtex_error};

pub const NEW: &str = include_str!("fixtures/checkout-orderForm-new.json");
pub const WITH_ITEM: &str = include_str!("fixtures/checkout-orderForm-get.json");
pub const OWNERSHIP: &str = "CheckoutOrderFormOwnership";

pub struct Line {
    pub unique_id: String,
    pub sku: String,
    pub quantity: u32,
    pub seller: String,
    /// The SLA chosen for this line; `None` is the best delivery SLA once there is an address.
    pub sla: Option<String>,
}

pub struct Form {
    pub owner: String,
    pub lines: Vec<Line>,
    pub messages: Vec<Value>,
    /// `clientProfileData` as attached (the fields sent, nothing else).
    pub profile: serde_json::Map<String, Value>,
    /// `selectedAddresses[0]` as attached.
    pub address: Option<Value>,
    pub coupon: Option<String>,
}

pub fn cookie_of(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all("cookie")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|line| line.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == OWNERSHIP)
        .map(|(_, value)| value.to_owned())
}

fn cents(price: Decimal) -> i64 {
    i64::try_from((price * Decimal::from(100)).round()).unwrap()
}

fn mask(text: &str) -> String {
    let first: String = text.chars().take(1).collect();
    format!("{first}***")
}

impl Inner {
    fn sku(&self, id: &str) -> Option<(Value, Value)> {
        self.products.iter().find_map(|entry| {
            entry.product["items"]
                .as_array()
                .unwrap()
                .iter()
                .find(|item| item["itemId"] == id)
                .map(|item| (entry.product.clone(), item.clone()))
        })
    }

    pub fn form_json(&self, id: &str, owner: bool) -> Value {
        let form = &self.forms[id];
        let mut body: Value = serde_json::from_str(NEW).unwrap();
        let template: Value = serde_json::from_str::<Value>(WITH_ITEM).unwrap()["items"][0].clone();
        body["orderFormId"] = json!(id);
        let mut total = 0i64;
        let items: Vec<Value> = form
            .lines
            .iter()
            .map(|line| {
                let (product, sku) = self.sku(&line.sku).unwrap();
                let price = cents(offer_price(&sku).unwrap());
                let line_total = price * i64::from(line.quantity);
                total += line_total;
                let mut item = template.clone();
                item["uniqueId"] = json!(line.unique_id);
                item["id"] = json!(line.sku);
                item["productId"] = product["productId"].clone();
                item["productRefId"] = product["productReference"].clone();
                item["refId"] = sku["referenceId"][0]["Value"].clone();
                item["ean"] = sku["ean"].clone();
                item["name"] = json!(format!("{} {}", product["productName"].as_str().unwrap(), sku["name"].as_str().unwrap()));
                item["skuName"] = sku["name"].clone();
                item["price"] = json!(price);
                item["listPrice"] = json!(price);
                item["sellingPrice"] = json!(price);
                item["priceTags"] = json!([]);
                item["quantity"] = json!(line.quantity);
                item["seller"] = json!(line.seller);
                item["imageUrl"] = sku["images"][0]["imageUrl"].clone();
                item["detailUrl"] = product["link"].clone();
                item["priceDefinition"] = json!({"calculatedSellingPrice": price, "total": line_total, "sellingPrices": [{"value": price, "quantity": line.quantity}]});
                item
            })
            .collect();
        body["items"] = json!(items);
        body["value"] = json!(total);
        body["totalizers"] = if total > 0 || !form.lines.is_empty() {
            json!([{"id": "Items", "name": "Total dos Itens", "value": total}])
        } else {
            json!([])
        };
        body["messages"] = json!(form.messages);
        body["paymentData"]["payments"] = json!([]);
        self.checkout_parts(id, &mut body);
        if !owner {
            let profile = &mut body["clientProfileData"];
            for key in ["email", "firstName", "lastName", "document", "phone"] {
                let shown = mask(profile[key].as_str().unwrap_or(""));
                profile[key] = json!(if key == "email" {
                    format!("{shown}@examplemail.com")
                } else {
                    shown
                });
            }
        }
        body
    }

    pub fn new_form(&mut self) -> Response {
        self.next_form += 1;
        let id = format!(
            "{:032x}",
            0x9ceee0fde6db489fbc682a0e2ab13a86_u128 + self.next_form
        );
        let owner = format!("{:x}", 0xa5a5_0000_u128 + self.next_form * 7919);
        self.forms.insert(
            id.clone(),
            Form {
                owner: owner.clone(),
                lines: Vec::new(),
                messages: Vec::new(),
                profile: serde_json::Map::new(),
                address: None,
                coupon: None,
            },
        );
        let body = self.form_json(&id, true);
        json_response(
            StatusCode::OK,
            &body,
            &[
                (
                    "set-cookie",
                    format!("checkout.vtex.com=__ofid={id}; path=/; secure; httponly"),
                ),
                (
                    "set-cookie",
                    format!("{OWNERSHIP}={owner}; path=/; secure; httponly; samesite=none"),
                ),
            ],
        )
    }

    pub fn order_form_route(
        &mut self,
        method: &str,
        rest: &str,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Response {
        let mut parts = rest.splitn(2, '/');
        let id = parts.next().unwrap_or("").to_owned();
        let tail = parts.next().unwrap_or("");
        let Some(form) = self.forms.get(&id) else {
            return vtex_error(StatusCode::NOT_FOUND, "CHK0004", "OrderForm não encontrado");
        };
        let owner = cookie_of(headers).is_some_and(|cookie| cookie == form.owner);
        self.cookie_log.push((format!("{method} {tail}"), owner));
        if method == "GET" && tail.is_empty() {
            let body = self.form_json(&id, owner);
            return json_response(StatusCode::OK, &body, &[]);
        }
        if !owner {
            return vtex_error(StatusCode::FORBIDDEN, "CHK003", "Acesso negado");
        }
        let request: Value = serde_json::from_slice(body).unwrap_or(json!({}));
        let orders = request["orderItems"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        self.forms.get_mut(&id).unwrap().messages.clear();
        match (method, tail) {
            ("POST", "items/removeAll") => self.forms.get_mut(&id).unwrap().lines.clear(),
            ("POST", "items") => {
                for order in &orders {
                    self.add(&id, order);
                }
            }
            ("PATCH", "items") | ("POST", "items/update") => {
                for order in &orders {
                    if let Some(index) = order["index"].as_u64() {
                        let quantity = order["quantity"].as_u64().unwrap() as u32;
                        if let Some(response) = self.change(&id, index as usize, quantity) {
                            return response;
                        }
                    } else if method == "PATCH" {
                        self.add(&id, order);
                    } else {
                        return vtex_error(
                            StatusCode::BAD_REQUEST,
                            "CHK0041",
                            "Índice do item inválido",
                        );
                    }
                }
            }
            ("POST", "attachments/clientProfileData") => {
                if let Some(refused) = self.refuse_document(&request) {
                    return refused;
                }
                self.attach_profile(&id, &request)
            }
            ("POST", "attachments/shippingData") => {
                if let Some(refused) = self.attach_shipping(&id, &request) {
                    return refused;
                }
            }
            ("POST", "coupons") => self.apply_coupon(&id, &request),
            _ => return vtex_error(StatusCode::NOT_FOUND, "CHK0000", "Rota não encontrada"),
        }
        let body = self.form_json(&id, true);
        json_response(StatusCode::OK, &body, &[])
    }

    pub fn message(&mut self, id: &str, code: &str, text: String, status: &str) {
        self.forms
            .get_mut(id)
            .unwrap()
            .messages
            .push(json!({"code": code, "text": text, "status": status}));
    }

    fn add(&mut self, id: &str, order: &Value) {
        let sku = order["id"].as_str().unwrap_or("").to_owned();
        let wanted = order["quantity"].as_u64().unwrap_or(0) as u32;
        let seller = order["seller"].as_str().unwrap_or("1").to_owned();
        let Some((product, item)) = self.sku(&sku) else {
            self.message(
                id,
                "ORD027",
                format!("Item {sku} não encontrado ou indisponível"),
                "error",
            );
            return;
        };
        let name = format!(
            "{} {}",
            product["productName"].as_str().unwrap(),
            item["name"].as_str().unwrap()
        );
        let units = self.stock.get(&sku).copied().unwrap_or(0);
        let already: u32 = self.forms[id]
            .lines
            .iter()
            .filter(|l| l.sku == sku)
            .map(|l| l.quantity)
            .sum();
        if units == 0 {
            self.message(
                id,
                "withoutStock",
                format!("O item {name} não tem estoque disponível"),
                "error",
            );
            return;
        }
        let quantity = wanted.min(units.saturating_sub(already));
        if quantity < wanted {
            self.message(
                id,
                "itemQuantityNotAvailable",
                format!("A quantidade desejada para o item {name} não está disponível"),
                "warning",
            );
        }
        if quantity == 0 {
            return;
        }
        self.next_line += 1;
        let unique_id = format!(
            "{:032X}",
            0xE0F2B7AF5CD74D668F1E27537206912C_u128 + self.next_line
        );
        let form = self.forms.get_mut(id).unwrap();
        match form.lines.iter_mut().find(|line| line.sku == sku) {
            Some(line) => line.quantity += quantity,
            None => form.lines.push(Line {
                unique_id,
                sku,
                quantity,
                seller,
                sla: None,
            }),
        }
    }

    /// `Some` is the error answer for a bad index.
    fn change(&mut self, id: &str, index: usize, quantity: u32) -> Option<Response> {
        let len = self.forms[id].lines.len();
        if index >= len {
            return Some(vtex_error(
                StatusCode::BAD_REQUEST,
                "CHK0041",
                "Índice do item inválido",
            ));
        }
        if quantity == 0 {
            self.forms.get_mut(id).unwrap().lines.remove(index);
            return None;
        }
        let sku = self.forms[id].lines[index].sku.clone();
        let units = self.stock.get(&sku).copied().unwrap_or(0);
        let granted = quantity.min(units);
        if granted < quantity {
            self.message(
                id,
                "itemQuantityNotAvailable",
                format!("A quantidade desejada para o item {sku} não está disponível"),
                "warning",
            );
        }
        let form = self.forms.get_mut(id).unwrap();
        if granted == 0 {
            form.lines.remove(index);
        } else {
            form.lines[index].quantity = granted;
        }
        None
    }
}
