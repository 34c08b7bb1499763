//! Money in integer minor units. Upstreams hand out decimal strings of any precision ("5.0",
//! "10.3", "12.50"); they are converted with decimal arithmetic only, never through `f64`, so a
//! price can never drift by a cent.

use std::str::FromStr;

use iso_currency::Currency;
use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Serialize, Serializer};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MoneyError {
    #[error("unknown ISO 4217 currency code {0:?}")]
    UnknownCurrency(String),
    #[error("{0:?} is not a decimal amount")]
    NotADecimal(String),
    #[error("amount {0:?} does not fit in minor units")]
    Overflow(String),
}

/// An amount in the minor unit of `currency` (cents for BRL/USD, yen for JPY, fils for BHD).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Money {
    pub amount: i64,
    pub currency: Currency,
}

impl Money {
    pub fn new(amount: i64, currency: Currency) -> Self {
        Self { amount, currency }
    }

    /// Parses an upstream decimal string in major units ("12.50" BRL → 1250).
    ///
    /// Digits beyond the currency's exponent are rounded half away from zero, the rule shops
    /// apply at checkout; upstreams that send "19.999" for a two-decimal currency are rare, and
    /// refusing the whole product for it would hide it from agents.
    pub fn from_major_str(value: &str, currency: Currency) -> Result<Self, MoneyError> {
        let trimmed = value.trim();
        let decimal = Decimal::from_str_exact(trimmed)
            .or_else(|_| Decimal::from_str(trimmed))
            .map_err(|_| MoneyError::NotADecimal(value.to_owned()))?;
        let exponent = minor_unit_exponent(currency);
        let scaled = decimal
            .checked_mul(Decimal::from(10_i64.pow(exponent)))
            .ok_or_else(|| MoneyError::Overflow(value.to_owned()))?
            .round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero);
        let amount = i64::try_from(scaled).map_err(|_| MoneyError::Overflow(value.to_owned()))?;
        Ok(Self { amount, currency })
    }

    /// Minor units already (WooCommerce Store API: "1250" with `currency_minor_unit: 2`).
    /// `upstream_exponent` is what the upstream used; it is re-scaled to the ISO exponent.
    pub fn from_minor_str(
        value: &str,
        upstream_exponent: u32,
        currency: Currency,
    ) -> Result<Self, MoneyError> {
        let minor = Decimal::from_str_exact(value.trim())
            .map_err(|_| MoneyError::NotADecimal(value.to_owned()))?;
        let major = minor
            .checked_div(Decimal::from(10_i64.pow(upstream_exponent.min(18))))
            .ok_or_else(|| MoneyError::Overflow(value.to_owned()))?;
        Self::from_major_str(&major.to_string(), currency)
    }

    /// The amount as a decimal string in major units ("1250" BRL → "12.50").
    pub fn to_major_string(&self) -> String {
        let exponent = minor_unit_exponent(self.currency);
        Decimal::new(self.amount, exponent).to_string()
    }

    pub fn code(&self) -> &'static str {
        self.currency.code()
    }
}

/// ISO 4217 exponent; currencies without one (XAU, XDR…) have no minor unit, so 0.
pub fn minor_unit_exponent(currency: Currency) -> u32 {
    u32::from(currency.exponent().unwrap_or(0))
}

pub fn parse_currency(code: &str) -> Result<Currency, MoneyError> {
    Currency::from_code(code.trim()).ok_or_else(|| MoneyError::UnknownCurrency(code.to_owned()))
}

impl Serialize for Money {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut state = serializer.serialize_struct("Money", 2)?;
        state.serialize_field("amount", &self.amount)?;
        state.serialize_field("currency", self.currency.code())?;
        state.end()
    }
}

/// The shape `serialize` writes, as answers publish it: an amount in ISO 4217 minor units.
impl schemars::JsonSchema for Money {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Money".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "required": ["amount", "currency"],
            "properties": {
                "amount": {"type": "integer"},
                "currency": {"type": "string", "pattern": "^[A-Z]{3}$"}
            }
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn minor(value: &str, code: &str) -> i64 {
        Money::from_major_str(value, parse_currency(code).unwrap())
            .unwrap()
            .amount
    }

    #[test]
    fn decimal_strings_convert_exactly_for_each_exponent() {
        // CAT-PRICE: amounts are integers in ISO 4217 minor units.
        assert_eq!(minor("5.0", "USD"), 500);
        assert_eq!(minor("10.3", "USD"), 1030);
        assert_eq!(minor("12.50", "USD"), 1250);
        assert_eq!(minor("0.1", "BRL"), 10);
        assert_eq!(minor("1299.90", "BRL"), 129990);
        assert_eq!(minor("7", "BRL"), 700);
        assert_eq!(minor("1500", "JPY"), 1500);
        assert_eq!(minor("1500.0", "JPY"), 1500);
        assert_eq!(minor("1.234", "BHD"), 1234);
        assert_eq!(minor("12.5", "BHD"), 12500);
        assert_eq!(minor("0.005", "KWD"), 5);
    }

    #[test]
    fn values_that_floats_get_wrong_stay_exact() {
        // 0.1 + 0.2 style traps and a long tail of nines.
        assert_eq!(minor("0.29", "USD"), 29);
        assert_eq!(minor("1.15", "USD"), 115);
        assert_eq!(minor("4.35", "USD"), 435);
        assert_eq!(minor("999999999.99", "USD"), 99999999999);
    }

    #[test]
    fn extra_precision_rounds_half_away_from_zero() {
        assert_eq!(minor("19.995", "USD"), 2000);
        assert_eq!(minor("19.994", "USD"), 1999);
        assert_eq!(minor("100.5", "JPY"), 101);
    }

    #[test]
    fn garbage_and_unknown_currencies_are_errors() {
        let usd = parse_currency("USD").unwrap();
        assert!(matches!(
            Money::from_major_str("12,50", usd),
            Err(MoneyError::NotADecimal(_))
        ));
        assert!(matches!(
            Money::from_major_str("NaN", usd),
            Err(MoneyError::NotADecimal(_))
        ));
        assert!(matches!(
            Money::from_major_str("", usd),
            Err(MoneyError::NotADecimal(_))
        ));
        assert!(matches!(
            parse_currency("XYZ"),
            Err(MoneyError::UnknownCurrency(_))
        ));
    }

    #[test]
    fn minor_strings_rescale_to_iso_exponent() {
        let brl = parse_currency("BRL").unwrap();
        let jpy = parse_currency("JPY").unwrap();
        assert_eq!(Money::from_minor_str("1250", 2, brl).unwrap().amount, 1250);
        assert_eq!(Money::from_minor_str("1500", 0, jpy).unwrap().amount, 1500);
        // An upstream configured with 2 decimals for a 0-decimal currency.
        assert_eq!(
            Money::from_minor_str("150000", 2, jpy).unwrap().amount,
            1500
        );
    }

    #[test]
    fn round_trip_to_major_string() {
        let bhd = parse_currency("BHD").unwrap();
        assert_eq!(Money::new(1234, bhd).to_major_string(), "1.234");
        let usd = parse_currency("USD").unwrap();
        assert_eq!(Money::new(1250, usd).to_major_string(), "12.50");
    }

    #[test]
    fn serializes_as_amount_and_code() {
        let usd = parse_currency("USD").unwrap();
        let json = serde_json::to_value(Money::new(12000, usd)).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"amount": 12000, "currency": "USD"})
        );
    }
}
