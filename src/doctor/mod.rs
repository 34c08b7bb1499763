//! `bcp-bridge doctor`: what agents will see, asked of the real store with the configured
//! credentials before any agent comes. Each check says what answered, or what failed and
//! which configuration key to fix. The REST binding is asked over HTTP as an agent asks it
//! (`rest`).

mod pix;
mod rest;

use std::fmt::Write as _;

use serde_json::{Value, json};
use url::Url;

use crate::brain::Brain;
use crate::platform::factory::PlatformFactory;
use crate::platform::{PlatformError, SharedPlatform};
use crate::protocol::Namespace;
use crate::registry;
use crate::startup::BridgeConfig;

/// One line of the report.
#[derive(Debug, Clone)]
pub struct Check {
    pub name: &'static str,
    pub passed: bool,
    pub detail: String,
}

#[derive(Debug, Clone, Default)]
pub struct Report {
    pub checks: Vec<Check>,
    /// The sample product as `get_product` answers it, when one was found.
    pub sample_product: Option<Value>,
}

impl Report {
    /// Whether an agent could search, look up and (when asked) build a cart.
    pub fn agent_could_shop(&self) -> bool {
        !self.checks.is_empty() && self.checks.iter().all(|check| check.passed)
    }

    fn pass(&mut self, name: &'static str, detail: impl Into<String>) {
        self.checks.push(Check {
            name,
            passed: true,
            detail: detail.into(),
        });
    }

    fn fail(&mut self, name: &'static str, detail: impl Into<String>) {
        self.checks.push(Check {
            name,
            passed: false,
            detail: detail.into(),
        });
    }

    pub fn render(&self) -> String {
        let mut text = String::new();
        for check in &self.checks {
            let mark = if check.passed { "ok  " } else { "FAIL" };
            let _ = writeln!(text, "  {mark}  {:<16} {}", check.name, check.detail);
        }
        if let Some(product) = &self.sample_product {
            let shown = serde_json::to_string_pretty(product).unwrap_or_default();
            let _ = writeln!(
                text,
                "\nThe sample product as an agent sees it (get_product):"
            );
            for line in shown.lines().take(60) {
                let _ = writeln!(text, "    {line}");
            }
            if shown.lines().count() > 60 {
                let _ = writeln!(text, "    …");
            }
        }
        let verdict = if self.agent_could_shop() { "yes" } else { "no" };
        let _ = writeln!(text, "\nAn agent could shop here: {verdict}");
        text
    }
}

/// What a failed store call means for the merchant, with the key to look at.
fn explain(error: &PlatformError, factory: &PlatformFactory) -> String {
    match error {
        PlatformError::Unauthorized { key } => {
            format!("the store refused the bridge's credentials: fix {key}")
        }
        PlatformError::Unavailable { reason, .. } => {
            let keys = factory.address_keys.join(" / ");
            if keys.is_empty() {
                reason.clone()
            } else {
                format!("{reason}: check {keys}")
            }
        }
        PlatformError::RateLimited { .. } => {
            "the store is throttling the bridge: try again shortly, or lower upstream.requests_per_second".to_owned()
        }
        other => other.to_string(),
    }
}

/// Runs every check against the store `config` describes; `with_cart` also creates a
/// one-line cart and cancels it.
pub async fn run(config: &BridgeConfig, with_cart: bool) -> Report {
    let mut report = Report::default();
    let Some(factory) = registry::factory(config.platform_name()) else {
        report.fail("configuration", "unknown store.platform");
        return report;
    };
    let built = config
        .build_platform(config.server.base_url(config.server.listen))
        .await;
    let platform: SharedPlatform = match built {
        Ok(platform) => platform,
        Err(problems) => {
            for problem in problems {
                report.fail("configuration", problem.to_string());
            }
            return report;
        }
    };
    let info = platform.info().clone();
    report.pass(
        "configuration",
        format!("platform {}, shop {:?}", info.platform, info.name),
    );
    if let Some(pix) = &config.pix {
        pix::check(
            pix,
            std::time::Duration::from_millis(config.upstream.timeout_ms),
            &mut report,
        )
        .await;
    }
    if let Err(error) = platform.health.ready().await {
        report.fail("store answers", explain(&error, factory));
        return report;
    }
    let described = platform
        .health
        .describe()
        .map(|detail| format!("; {detail}"))
        .unwrap_or_default();
    report.pass(
        "store answers",
        format!(
            "{} ({}){described}",
            info.storefront_url,
            info.currency.code()
        ),
    );

    if let Some(checkout) = &platform.checkout {
        checkout_fields(checkout.as_ref(), factory, &mut report).await;
        if config.pix.is_some() {
            pix::store_side(checkout.as_ref(), &mut report).await;
        }
    }

    let brain = Brain::new(
        platform.clone(),
        Namespace::BCP,
        config.limits.clone(),
        &config.cart,
    );
    let page = platform
        .catalog
        .search(&crate::model::SearchRequest {
            query: None,
            filters: Default::default(),
            context: Default::default(),
            upstream_cursor: None,
            limit: config.limits.max_page_size,
        })
        .await;
    let page = match page {
        Ok(page) => page,
        Err(error) => {
            report.fail("catalog", explain(&error, factory));
            return report;
        }
    };
    let count = match (page.total_count, &page.next_cursor) {
        (Some(total), _) => format!("{total} products"),
        (None, Some(_)) => format!("at least {} products", page.products.len()),
        (None, None) => format!("{} products", page.products.len()),
    };
    let Some(sample) = page
        .products
        .iter()
        .find(|product| product.variants.iter().any(|variant| variant.available))
        .or(page.products.first())
        .cloned()
    else {
        report.fail("catalog", "the store lists no products an agent could find");
        return report;
    };
    report.pass("catalog", count);

    let product_call =
        serde_json::from_value(json!({ "id": sample.id })).map_err(|error| error.to_string());
    let answer = match product_call {
        Ok(request) => brain
            .get_product(request, brain.namespace().release(None))
            .await
            .map_err(|error| error.to_string())
            .and_then(|answer| answer.to_value().map_err(|error| error.to_string())),
        Err(error) => Err(error),
    };
    match answer {
        Ok(answer) if answer.get("product").is_some() => {
            report.pass(
                "sample product",
                format!("{:?} ({} variants)", sample.title, sample.variants.len()),
            );
            report.sample_product = answer.get("product").cloned();
        }
        Ok(answer) => report.fail("sample product", format!("get_product answered {answer}")),
        Err(error) => report.fail("sample product", error),
    }

    match rest::sample_product(config, &sample.id).await {
        Ok(detail) => report.pass("REST", detail),
        Err(detail) => report.fail("REST", detail),
    }

    if with_cart {
        cart_round_trip(&brain, &sample, &mut report).await;
    }
    report
}

/// Issue 37: the fields the store's checkout requires beyond its own, and which the bridge
/// fills; one it cannot fill sends every buyer to the store's page to give it.
async fn checkout_fields(
    checkout: &dyn crate::platform::checkout::CheckoutPort,
    factory: &PlatformFactory,
    report: &mut Report,
) {
    let fields = match checkout.checkout_fields().await {
        Ok(fields) => fields,
        Err(error) => {
            report.fail("checkout fields", explain(&error, factory));
            return;
        }
    };
    if fields.is_empty() {
        report.pass(
            "checkout fields",
            "the store asks for no fields beyond its own",
        );
        return;
    }
    let listed: Vec<String> = fields
        .iter()
        .map(|field| {
            let need = if field.required {
                "required"
            } else {
                "optional"
            };
            match field.filled_from {
                Some(source) => format!(
                    "{} ({}, {need}): filled from {source}",
                    field.key, field.label
                ),
                None if field.required => format!(
                    "{} ({}, {need}): NOT filled by the bridge; buyers give it on the store's page",
                    field.key, field.label
                ),
                None => format!("{} ({}, {need}): not filled", field.key, field.label),
            }
        })
        .collect();
    report.pass("checkout fields", listed.join("; "));
}

async fn cart_round_trip(brain: &Brain, sample: &crate::model::Product, report: &mut Report) {
    let Some(variant) = sample.variants.iter().find(|variant| variant.available) else {
        report.fail(
            "cart",
            "the sample product has no variant in stock to put in a cart",
        );
        return;
    };
    let request = serde_json::from_value(json!({
        "line_items": [{"item": {"id": variant.id}, "quantity": 1}]
    }));
    let created = match request {
        Ok(request) => {
            brain
                .create_cart(request, brain.namespace().release(None))
                .await
        }
        Err(error) => {
            report.fail("cart", error.to_string());
            return;
        }
    };
    let created = match created.map(|answer| answer.to_value()) {
        Ok(Ok(created)) => created,
        Ok(Err(error)) => {
            report.fail("cart", error.to_string());
            return;
        }
        Err(error) => {
            report.fail("cart", error.to_string());
            return;
        }
    };
    let (Some(id), continue_url) = (
        created.get("id").and_then(Value::as_str),
        created.get("continue_url").and_then(Value::as_str),
    ) else {
        report.fail("cart", format!("create_cart answered {created}"));
        return;
    };
    let continue_url = continue_url.unwrap_or("(none)");
    let checkout_ok = Url::parse(continue_url).is_ok();
    match brain.cancel_cart(id, brain.namespace().release(None)).await {
        Ok(_) if checkout_ok => report.pass(
            "cart",
            format!("created and cancelled a one-line cart; continue_url {continue_url}"),
        ),
        Ok(_) => report.fail(
            "cart",
            format!("the cart has no usable continue_url ({continue_url})"),
        ),
        Err(error) => report.fail("cart", format!("created, but cancelling failed: {error}")),
    }
}
