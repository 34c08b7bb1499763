//! What a VTEX offer says about paying for it in Brazil, for the variant's `metadata`: the
//! card plans (`commertialOffer.Installments`) and the cash/Pix price (`spotPrice`), in minor
//! units of the catalog's currency. Only what the store wrote: an offer without them adds
//! nothing, and no plan is computed here.
//!
//! Keys (documented in docs/merchants/vtex.md): `installments`: `[{count, value, total, interest_free,
//! payment_system}]`, one per number of installments (the store's cheapest plan for that
//! count), fewest first; `spot_price`: the price paid at once in cash or Pix.

use iso_currency::Currency;
use rust_decimal::Decimal;
use serde_json::{Map, Value, json};

use super::wire::{Installment, Offer, major};

struct Plan<'a> {
    count: u32,
    value: i64,
    total: i64,
    interest_free: bool,
    payment_system: Option<&'a str>,
}

fn plan(installment: &Installment, currency: Currency) -> Option<Plan<'_>> {
    if installment.count == 0 {
        return None;
    }
    let value = major(installment.value.as_ref()?, currency)?.amount;
    let total = major(installment.total.as_ref()?, currency)?.amount;
    if value <= 0 || total <= 0 {
        return None;
    }
    let rate = installment
        .interest_rate
        .as_ref()
        .and_then(|rate| Decimal::from_str_exact(rate.0.trim()).ok())?;
    Some(Plan {
        count: installment.count,
        value,
        total,
        interest_free: rate.is_zero(),
        payment_system: installment
            .payment_system
            .as_deref()
            .map(str::trim)
            .filter(|name| !name.is_empty()),
    })
}

/// The offer's plans and cash price as `metadata` keys, or `None` when it names neither.
pub fn metadata(offer: &Offer, currency: Currency) -> Option<Map<String, Value>> {
    let mut plans: Vec<Plan<'_>> = Vec::new();
    for plan in offer
        .installments
        .iter()
        .filter_map(|found| plan(found, currency))
    {
        match plans.iter_mut().find(|kept| kept.count == plan.count) {
            Some(kept) if plan.total < kept.total => *kept = plan,
            Some(_) => {}
            None => plans.push(plan),
        }
    }
    plans.sort_by_key(|plan| plan.count);
    let mut out = Map::new();
    if !plans.is_empty() {
        let listed: Vec<Value> = plans
            .iter()
            .map(|plan| {
                let mut entry = json!({
                    "count": plan.count,
                    "value": plan.value,
                    "total": plan.total,
                    "interest_free": plan.interest_free,
                });
                if let Some(name) = plan.payment_system {
                    entry["payment_system"] = json!(name);
                }
                entry
            })
            .collect();
        out.insert("installments".to_owned(), Value::Array(listed));
    }
    if let Some(spot) = offer
        .spot_price
        .as_ref()
        .and_then(|spot| major(spot, currency))
        .filter(|spot| spot.amount > 0)
    {
        out.insert("spot_price".to_owned(), json!(spot.amount));
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn offer(text: &str) -> Offer {
        serde_json::from_str(text).unwrap()
    }

    /// Issue 37 item 5: "12x de R$ 10,00 sem juros" and "R$ 95,00 no Pix" as the store says.
    #[test]
    fn plans_and_cash_price_in_minor_units_cheapest_per_count() {
        let found = metadata(
            &offer(
                r#"{"Price": 120.0, "spotPrice": 95.00, "Installments": [
                {"Value": 120.0, "InterestRate": 0.0, "TotalValuePlusInterestRate": 120.0, "NumberOfInstallments": 1, "PaymentSystemName": "Visa"},
                {"Value": 10.0, "InterestRate": 0.0, "TotalValuePlusInterestRate": 120.0, "NumberOfInstallments": 12, "PaymentSystemName": "Visa"},
                {"Value": 11.5, "InterestRate": 1.99, "TotalValuePlusInterestRate": 138.0, "NumberOfInstallments": 12, "PaymentSystemName": "Elo"},
                {"Value": 60.5, "InterestRate": 0.5, "TotalValuePlusInterestRate": 121.0, "NumberOfInstallments": 2, "PaymentSystemName": "Elo"}
            ]}"#,
            ),
            Currency::BRL,
        )
        .unwrap();
        assert_eq!(found["spot_price"], 9500);
        assert_eq!(
            Value::Array(found["installments"].as_array().unwrap().clone()),
            json!([
                {"count": 1, "value": 12000, "total": 12000, "interest_free": true, "payment_system": "Visa"},
                {"count": 2, "value": 6050, "total": 12100, "interest_free": false, "payment_system": "Elo"},
                {"count": 12, "value": 1000, "total": 12000, "interest_free": true, "payment_system": "Visa"}
            ])
        );
    }

    #[test]
    fn nothing_is_invented_where_the_store_says_nothing() {
        assert!(metadata(&offer(r#"{"Price": 42.0}"#), Currency::BRL).is_none());
        assert!(
            metadata(
                &offer(r#"{"Price": 42.0, "spotPrice": null, "Installments": null}"#),
                Currency::BRL
            )
            .is_none()
        );
        // A plan without its rate cannot say whether it is interest-free: left out.
        assert!(
            metadata(
                &offer(
                    r#"{"Installments": [{"Value": 21.0, "TotalValuePlusInterestRate": 42.0, "NumberOfInstallments": 2}]}"#
                ),
                Currency::BRL
            )
            .is_none()
        );
    }
}
