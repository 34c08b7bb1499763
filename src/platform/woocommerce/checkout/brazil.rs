//! What a WooCommerce store asks for at checkout beyond WooCommerce's own fields, read from the
//! Store API's own schema (`OPTIONS /checkout`: `additional_fields`, and the extra properties
//! of `billing_address` / `shipping_address`), and how the bridge fills the ones it understands:
//! Brazilian Market on WooCommerce's `csbmw/persontype`, `csbmw/cpf`, `csbmw/cnpj`,
//! `csbmw/company-name`, `csbmw/number` and `csbmw/neighborhood`. A required field it does not
//! understand is a `Requirement::Other`: only the store's page can collect it.
//!
//! The schema is read once and kept for `SCHEMA_TTL`, and read again at once when the store
//! refuses an order for a field (the merchant changed a plugin's settings): one request per
//! schema change, not one per call.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Map, Value, json};

use super::super::client::StoreApi;
use crate::model::checkout::{Address, Buyer};
use crate::model::fiscal::{Requirement, TaxpayerKind};

pub const PERSON_TYPE: &str = "csbmw/persontype";
pub const CPF: &str = "csbmw/cpf";
pub const CNPJ: &str = "csbmw/cnpj";
pub const COMPANY_NAME: &str = "csbmw/company-name";
pub const NUMBER: &str = "csbmw/number";
pub const NEIGHBORHOOD: &str = "csbmw/neighborhood";

/// How long a read schema is trusted before it is read again.
const SCHEMA_TTL: Duration = Duration::from_secs(300);
/// After a failed read the bridge goes on with what it had and tries again this much later.
const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(30);

/// WooCommerce's own address properties: anything else in an address is a plugin's field.
const CORE_ADDRESS: &[&str] = &[
    "first_name",
    "last_name",
    "company",
    "address_1",
    "address_2",
    "city",
    "state",
    "postcode",
    "country",
    "email",
    "phone",
];

/// One field a plugin added to the store's checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub key: String,
    pub label: String,
    pub required: bool,
    /// A select's values (`csbmw/persontype`: "1" individual, "2" company).
    pub options: Vec<String>,
}

/// The store's extra checkout fields, as its schema lists them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckoutFields {
    /// `additional_fields` (contact and order locations).
    pub contact: Vec<Field>,
    /// Extra properties of the billing and shipping addresses.
    pub address: Vec<Field>,
}

fn fields_of(properties: Option<&Value>, skip: &[&str]) -> Vec<Field> {
    let Some(properties) = properties.and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .filter(|(key, _)| !skip.contains(&key.as_str()))
        .map(|(key, property)| Field {
            key: key.clone(),
            label: property
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or(key)
                .to_owned(),
            required: property.get("required").and_then(Value::as_bool) == Some(true),
            options: property
                .get("enum")
                .and_then(Value::as_array)
                .map(|values| {
                    values
                        .iter()
                        .filter_map(Value::as_str)
                        .filter(|value| !value.is_empty())
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect()
}

/// What the bridge fills a field from, `None` when it does not understand it.
pub fn filled_from(key: &str) -> Option<&'static str> {
    Some(match key {
        PERSON_TYPE => "the kind of buyer.taxpayer_id",
        CPF | CNPJ => "buyer.taxpayer_id",
        COMPANY_NAME => "the buyer's name (CNPJ buyers)",
        NUMBER => "the address's house number (or s/n)",
        NEIGHBORHOOD => "the address's bairro",
        _ => return None,
    })
}

pub fn understood(key: &str) -> bool {
    filled_from(key).is_some()
}

impl CheckoutFields {
    /// From the body of `OPTIONS /checkout`.
    pub fn from_schema(body: &Value) -> Self {
        let properties = body.pointer("/schema/properties");
        let contact = fields_of(
            properties.and_then(|p| p.pointer("/additional_fields/properties")),
            &[],
        );
        let mut address = fields_of(
            properties.and_then(|p| p.pointer("/shipping_address/properties")),
            CORE_ADDRESS,
        );
        for field in fields_of(
            properties.and_then(|p| p.pointer("/billing_address/properties")),
            CORE_ADDRESS,
        ) {
            match address.iter_mut().find(|known| known.key == field.key) {
                Some(known) => known.required |= field.required,
                None => address.push(field),
            }
        }
        Self { contact, address }
    }

    fn contact(&self, key: &str) -> Option<&Field> {
        self.contact.iter().find(|field| field.key == key)
    }

    fn has_address(&self, key: &str) -> bool {
        self.address.iter().any(|field| field.key == key)
    }

    fn requires_address(&self, key: &str) -> bool {
        self.address
            .iter()
            .any(|field| field.key == key && field.required)
    }

    /// Every field of the store, contact first, with whether it is required.
    pub fn all(&self) -> impl Iterator<Item = &Field> {
        self.contact.iter().chain(&self.address)
    }

    /// What the store requires before it takes an order, in the model's words.
    pub fn requirements(&self) -> Vec<Requirement> {
        let mut requirements = Vec::new();
        let required = |key| self.contact(key).is_some_and(|field| field.required);
        if required(CPF) || required(CNPJ) {
            let kinds = [(CPF, TaxpayerKind::Cpf), (CNPJ, TaxpayerKind::Cnpj)]
                .into_iter()
                .filter(|(key, _)| self.contact(key).is_some())
                .map(|(_, kind)| kind)
                .collect();
            requirements.push(Requirement::TaxpayerId { kinds });
        }
        if self.requires_address(NUMBER) {
            requirements.push(Requirement::HouseNumber);
        }
        if self.requires_address(NEIGHBORHOOD) {
            requirements.push(Requirement::Neighborhood);
        }
        for field in self.all() {
            if field.required && !understood(&field.key) {
                requirements.push(Requirement::Other {
                    key: field.key.clone(),
                    label: field.label.clone(),
                });
            }
        }
        requirements
    }

    /// `additional_fields` for `POST /checkout`: the buyer's document in the field of its
    /// kind, and the person type that goes with it where the store asks for one.
    pub fn additional(&self, buyer: &Buyer) -> Map<String, Value> {
        let mut out = Map::new();
        let Some(document) = &buyer.taxpayer_id else {
            return out;
        };
        let (key, person) = match document.kind {
            TaxpayerKind::Cpf => (CPF, "1"),
            TaxpayerKind::Cnpj => (CNPJ, "2"),
            TaxpayerKind::Foreign => return out,
        };
        if self.contact(key).is_none() {
            return out;
        }
        out.insert(key.to_owned(), json!(document.value));
        if self
            .contact(PERSON_TYPE)
            .is_some_and(|field| field.options.iter().any(|option| option == person))
        {
            out.insert(PERSON_TYPE.to_owned(), json!(person));
        }
        // A company buys under its name: the buyer's, as the agent gave it.
        if document.kind == TaxpayerKind::Cnpj && self.contact(COMPANY_NAME).is_some() {
            let name = [&buyer.first_name, &buyer.last_name]
                .into_iter()
                .flatten()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(" ");
            if !name.is_empty() {
                out.insert(COMPANY_NAME.to_owned(), json!(name));
            }
        }
        out
    }

    /// Writes the house number and bairro into a WooCommerce address: into the store's own
    /// fields where it has them, otherwise back into the lines (`address_1` "street, number",
    /// `address_2` "complement - bairro") so nothing the agent gave is lost.
    pub fn fill_address(&self, address: &Address, target: &mut Value) {
        let street = address.street_address.clone().unwrap_or_default();
        let complement = address.extended_address.clone().unwrap_or_default();
        if self.has_address(NUMBER) {
            let number = address.number.clone().unwrap_or_else(|| "s/n".to_owned());
            target[NUMBER] = json!(number);
        } else if let Some(number) = &address.number {
            target["address_1"] = json!(join(&street, ", ", number));
        }
        if self.has_address(NEIGHBORHOOD) {
            target[NEIGHBORHOOD] = json!(address.neighborhood.clone().unwrap_or_default());
        } else if let Some(bairro) = &address.neighborhood {
            target["address_2"] = json!(join(&complement, " - ", bairro));
        }
    }
}

impl CheckoutFields {
    /// The house number and bairro as the store's address `held` holds them in its own
    /// fields (the Store API echoes a plugin's address fields in the cart's and `GET
    /// /checkout`'s addresses): read only for the fields its schema lists, so a store
    /// without them keeps both in its lines, where `fill_address` joined them.
    pub fn read_address(&self, held: &Value, address: &mut Address) {
        let field = |key: &str| {
            held.get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|text| !text.is_empty())
                .map(super::super::text::decode_entities)
        };
        if self.has_address(NUMBER) {
            address.number = field(NUMBER);
        }
        if self.has_address(NEIGHBORHOOD) {
            address.neighborhood = field(NEIGHBORHOOD);
        }
    }
}

fn join(head: &str, separator: &str, tail: &str) -> String {
    if head.is_empty() {
        tail.to_owned()
    } else {
        format!("{head}{separator}{tail}")
    }
}

struct Held {
    fields: Arc<CheckoutFields>,
    /// When to read the schema again.
    fresh_until: Instant,
}

/// The store's checkout fields, read from its schema and kept between reads.
pub struct FieldsCache {
    held: RwLock<Option<Held>>,
    /// One read at a time: callers that find it stale while another reads wait for it.
    reading: tokio::sync::Mutex<()>,
}

impl Default for FieldsCache {
    fn default() -> Self {
        Self {
            held: RwLock::new(None),
            reading: tokio::sync::Mutex::new(()),
        }
    }
}

impl FieldsCache {
    /// The fields as last read (none before the first read).
    pub fn current(&self) -> Arc<CheckoutFields> {
        self.held
            .read()
            .ok()
            .and_then(|held| held.as_ref().map(|held| held.fields.clone()))
            .unwrap_or_default()
    }

    fn stale(&self) -> bool {
        self.held
            .read()
            .map(|held| {
                held.as_ref()
                    .is_none_or(|held| Instant::now() >= held.fresh_until)
            })
            .unwrap_or(true)
    }

    /// The next `refresh` reads the schema again (the store refused an order for a field).
    pub fn invalidate(&self) {
        if let Ok(mut held) = self.held.write()
            && let Some(held) = held.as_mut()
        {
            held.fresh_until = Instant::now();
        }
    }

    /// Reads the schema when the held one is stale; a failed read keeps what was held.
    pub async fn refresh(&self, api: &StoreApi) -> Arc<CheckoutFields> {
        if !self.stale() {
            return self.current();
        }
        let _reading = self.reading.lock().await;
        if !self.stale() {
            return self.current();
        }
        let (fields, ttl) = match api.checkout_schema().await {
            Ok((StatusCode::OK, body)) => {
                (Arc::new(CheckoutFields::from_schema(&body)), SCHEMA_TTL)
            }
            Ok((status, _)) => {
                tracing::warn!(
                    status = status.as_u16(),
                    "the store's checkout schema is unavailable; its required fields are unknown"
                );
                (self.current(), RETRY_AFTER_FAILURE)
            }
            Err(error) => {
                tracing::warn!(%error, "the store's checkout schema is unavailable; its required fields are unknown");
                (self.current(), RETRY_AFTER_FAILURE)
            }
        };
        if let Ok(mut held) = self.held.write() {
            *held = Some(Held {
                fields: fields.clone(),
                fresh_until: Instant::now() + ttl,
            });
        }
        fields
    }
}

#[cfg(test)]
#[path = "brazil_tests.rs"]
mod tests;
