//! Optional REST API v3 access for what the Store API does not expose: the merchant's default
//! variation (`default_attributes`) and an order's meta (where NF-e plugins keep the invoice),
//! read-only, whose failures never fail a tool (without it the brain features the first
//! purchasable variant, and an order answers without its NF-e); and, with a write key, an
//! order awaiting its Pix payment marked paid or cancelled (`update_order`).

use std::collections::HashMap;

use reqwest::StatusCode;
use secrecy::ExposeSecret;
use serde::Deserialize;
use url::Url;

use super::settings::V3_NEEDS_TLS;
use crate::platform::upstream::{CallKind, UpstreamClient};
use crate::settings::Secret;

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct DefaultAttribute {
    pub name: String,
    pub option: String,
}

#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct ProductDefaults {
    id: u64,
    default_attributes: Vec<DefaultAttribute>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct MetaEntry {
    key: String,
    value: serde_json::Value,
}

#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct OrderMeta {
    meta_data: Vec<MetaEntry>,
}

#[derive(Clone)]
pub struct RestV3 {
    client: UpstreamClient,
    root: Url,
    orders: Url,
    key: Secret,
    secret: Secret,
}

impl RestV3 {
    pub fn new(client: UpstreamClient, base: &Url, key: Secret, secret: Secret) -> Option<Self> {
        let mut root = base.clone();
        root.path_segments_mut()
            .ok()?
            .pop_if_empty()
            .extend(["wp-json", "wc", "v3", "products"]);
        let mut orders = base.clone();
        orders
            .path_segments_mut()
            .ok()?
            .pop_if_empty()
            .extend(["wp-json", "wc", "v3", "orders"]);
        Some(Self {
            client,
            root,
            orders,
            key,
            secret,
        })
    }

    /// Default attributes of the given products, by product id; empty on any failure.
    pub async fn defaults(&self, ids: &[u64]) -> HashMap<u64, Vec<DefaultAttribute>> {
        let mut out = HashMap::new();
        for chunk in ids.chunks(100) {
            let mut url = self.root.clone();
            url.query_pairs_mut()
                .append_pair(
                    "include",
                    &chunk
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(","),
                )
                .append_pair("per_page", "100")
                .append_pair("_fields", "id,default_attributes");
            // Basic auth in a header, never key/secret query parameters that end up in logs.
            let request = self.client.http().get(url).basic_auth(
                self.key.0.expose_secret(),
                Some(self.secret.0.expose_secret()),
            );
            let parsed = match self.client.send(request, CallKind::Read).await {
                Ok(response) if response.status == StatusCode::OK => {
                    response.json::<Vec<ProductDefaults>>("v3 products")
                }
                Ok(response) => {
                    let status = response.status.as_u16();
                    if response.status == StatusCode::UNAUTHORIZED && self.root.scheme() == "http" {
                        // Over http the store never accepts the keys: permissions are not it.
                        tracing::warn!(status, "REST v3 refused the keys: {V3_NEEDS_TLS}");
                    } else {
                        tracing::warn!(
                            status,
                            "REST v3 refused the request; check the consumer key's permissions"
                        );
                    }
                    return out;
                }
                Err(error) => Err(error),
            };
            match parsed {
                Ok(products) => out.extend(
                    products
                        .into_iter()
                        .map(|product| (product.id, product.default_attributes)),
                ),
                Err(error) => {
                    tracing::warn!(%error, "REST v3 default variations unavailable");
                    return out;
                }
            }
        }
        out
    }

    /// An order's meta entries whose values are text, by key; `None` on any failure.
    pub async fn order_meta(&self, order_id: u64) -> Option<HashMap<String, String>> {
        let mut url = self.orders.clone();
        url.path_segments_mut().ok()?.push(&order_id.to_string());
        url.query_pairs_mut().append_pair("_fields", "id,meta_data");
        let request = self.client.http().get(url).basic_auth(
            self.key.0.expose_secret(),
            Some(self.secret.0.expose_secret()),
        );
        match self.client.send(request, CallKind::Read).await {
            Ok(response) if response.status == StatusCode::OK => {
                match response.json::<OrderMeta>("v3 order") {
                    Ok(order) => Some(
                        order
                            .meta_data
                            .into_iter()
                            .filter_map(|entry| match entry.value {
                                serde_json::Value::String(text) => Some((entry.key, text)),
                                serde_json::Value::Number(number) => {
                                    Some((entry.key, number.to_string()))
                                }
                                _ => None,
                            })
                            .collect(),
                    ),
                    Err(error) => {
                        tracing::warn!(%error, "REST v3 order meta unreadable; the order answers without its NF-e");
                        None
                    }
                }
            }
            Ok(response) => {
                tracing::warn!(
                    status = response.status.as_u16(),
                    "REST v3 refused the order read; the order answers without its NF-e (check the key's read permission)"
                );
                None
            }
            Err(error) => {
                tracing::warn!(%error, "REST v3 order meta unavailable; the order answers without its NF-e");
                None
            }
        }
    }

    /// `PUT /orders/{id}` with the key pair and `body`, cut to `fields` when given.
    fn order_put(
        &self,
        id: &str,
        fields: Option<&str>,
        body: &serde_json::Value,
    ) -> Result<reqwest::RequestBuilder, crate::platform::PlatformError> {
        let mut url = self.orders.clone();
        url.path_segments_mut()
            .map_err(|()| {
                crate::platform::PlatformError::BadResponse("REST v3: no orders URL".into())
            })?
            .push(id);
        if let Some(fields) = fields {
            url.query_pairs_mut().append_pair("_fields", fields);
        }
        Ok(self
            .client
            .http()
            .put(url)
            .basic_auth(
                self.key.0.expose_secret(),
                Some(self.secret.0.expose_secret()),
            )
            .json(body))
    }

    /// Whether the key may write orders, asked without writing one: `PUT /orders/0` (no order
    /// has id 0). WooCommerce checks the key's permission first: a read key gets 401 ("does not
    /// have write permissions"), a read/write key 400 `woocommerce_rest_shop_order_invalid_id`
    /// (measured on 10.9.4).
    pub async fn can_write_orders(&self) -> Result<(), crate::platform::PlatformError> {
        use crate::platform::PlatformError;
        let request = self.order_put("0", None, &serde_json::json!({}))?;
        let response = self.client.send(request, CallKind::Read).await?;
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct Refusal {
            code: String,
        }
        let refusal = response
            .json::<Refusal>("v3 order probe")
            .unwrap_or_default();
        match response.status {
            StatusCode::BAD_REQUEST if refusal.code == "woocommerce_rest_shop_order_invalid_id" => {
                Ok(())
            }
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Err(PlatformError::Unauthorized {
                key: "store.consumer_key",
            }),
            status => Err(PlatformError::BadResponse(format!(
                "REST v3 order write probe: HTTP {}",
                status.as_u16()
            ))),
        }
    }

    /// `PUT /orders/{id}` with `body` (`status`, `transaction_id`): the order's status as the
    /// store then holds it (200 with the order, whatever it did with the body). A refusal is
    /// the store's error: 401 for a read-only key, 400 for an unknown order or status.
    pub async fn update_order(
        &self,
        order_id: u64,
        body: &serde_json::Value,
    ) -> Result<String, crate::platform::PlatformError> {
        use crate::platform::PlatformError;
        let request = self.order_put(&order_id.to_string(), Some("id,status"), body)?;
        let response = self.client.send(request, CallKind::Write).await?;
        if response.status != StatusCode::OK {
            let status = response.status.as_u16();
            tracing::warn!(
                status,
                "REST v3 refused an order update; the Pix handler needs a read/write key"
            );
            return Err(PlatformError::BadResponse(format!(
                "REST v3 order update: HTTP {status}"
            )));
        }
        #[derive(Deserialize)]
        struct Updated {
            status: String,
        }
        Ok(response.json::<Updated>("v3 order update")?.status)
    }
}
