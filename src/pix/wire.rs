//! API Pix's JSON as the bridge writes and reads it (`CobPayload`, `CobCompleta`, `Problema`,
//! the OAuth2 token answer). Only the fields the bridge uses are read; none of these types
//! holds the `devedor` the PSP echoes, so the buyer's document is never parsed back.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::brcode::amount_minor;
use super::port::{Charge, ChargeRequest, ChargeStatus, PixError, Received};
use crate::model::fiscal::TaxpayerKind;
use crate::money::Money;

/// `solicitacaoPagador` and `devedor.nome` limits (API Pix: 140 and 200 characters).
const NOTE_MAX: usize = 140;
const NAME_MAX: usize = 200;

#[derive(Serialize)]
pub struct CobBody<'a> {
    calendario: Expiry,
    #[serde(skip_serializing_if = "Option::is_none")]
    devedor: Option<Devedor<'a>>,
    valor: Valor,
    chave: &'a str,
    #[serde(rename = "solicitacaoPagador", skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

#[derive(Serialize)]
struct Expiry {
    expiracao: u32,
}

#[derive(Serialize)]
struct Devedor<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    cpf: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cnpj: Option<&'a str>,
    nome: String,
}

#[derive(Serialize, Deserialize)]
struct Valor {
    original: String,
}

/// BRL minor units as API Pix writes an amount: "123.45", from integers only.
pub fn decimal(amount: Money) -> Result<String, PixError> {
    if amount.code() != "BRL" {
        return Err(PixError::Refused(format!(
            "a Pix charge is in BRL, not {}",
            amount.code()
        )));
    }
    if amount.amount <= 0 {
        return Err(PixError::Refused(
            "a Pix charge's amount must be positive".to_owned(),
        ));
    }
    Ok(format!(
        "{}.{:02}",
        amount.amount / 100,
        amount.amount % 100
    ))
}

fn truncated(text: &str, max: usize) -> String {
    text.trim().chars().take(max).collect()
}

impl<'a> CobBody<'a> {
    pub fn new(request: &'a ChargeRequest, key: &'a str) -> Result<Self, PixError> {
        let devedor = request.debtor.as_ref().and_then(|debtor| {
            let document = debtor.document.value.as_str();
            let (cpf, cnpj) = match debtor.document.kind {
                TaxpayerKind::Cpf => (Some(document), None),
                TaxpayerKind::Cnpj => (None, Some(document)),
                // API Pix knows only Brazilian documents.
                TaxpayerKind::Foreign => return None,
            };
            Some(Devedor {
                cpf,
                cnpj,
                nome: truncated(&debtor.name, NAME_MAX),
            })
        });
        Ok(Self {
            calendario: Expiry {
                expiracao: request.expires_secs,
            },
            devedor,
            valor: Valor {
                original: decimal(request.amount)?,
            },
            chave: key,
            note: request
                .note
                .as_deref()
                .map(|note| truncated(note, NOTE_MAX))
                .filter(|note| !note.is_empty()),
        })
    }
}

#[derive(Deserialize)]
pub struct CobAnswer {
    txid: String,
    status: String,
    calendario: Calendario,
    valor: Valor,
    chave: String,
    #[serde(rename = "pixCopiaECola")]
    copia_e_cola: Option<String>,
    location: Option<String>,
    loc: Option<Loc>,
    #[serde(default)]
    pix: Vec<PixAnswer>,
}

#[derive(Deserialize)]
struct Calendario {
    criacao: String,
    /// API Pix's default when absent: one day.
    expiracao: Option<u32>,
}

#[derive(Deserialize)]
struct Loc {
    location: Option<String>,
}

#[derive(Deserialize)]
struct PixAnswer {
    #[serde(rename = "endToEndId")]
    end_to_end_id: String,
    valor: String,
    horario: String,
}

fn money(text: &str, what: &str) -> Result<Money, PixError> {
    amount_minor(text)
        .map(|minor| Money::new(minor, iso_currency::Currency::BRL))
        .ok_or_else(|| PixError::Malformed(format!("{what} is not a decimal amount")))
}

fn instant(text: &str, what: &str) -> Result<OffsetDateTime, PixError> {
    OffsetDateTime::parse(text, &Rfc3339)
        .map_err(|_| PixError::Malformed(format!("{what} is not an RFC 3339 date-time")))
}

impl CobAnswer {
    pub fn into_charge(self) -> Result<Charge, PixError> {
        let status = match self.status.as_str() {
            "ATIVA" => ChargeStatus::Active,
            "CONCLUIDA" => ChargeStatus::Completed,
            "REMOVIDA_PELO_USUARIO_RECEBEDOR" => ChargeStatus::RemovedByReceiver,
            "REMOVIDA_PELO_PSP" => ChargeStatus::RemovedByPsp,
            _ => {
                return Err(PixError::Malformed(
                    "status is none of ATIVA, CONCLUIDA, REMOVIDA_*".to_owned(),
                ));
            }
        };
        let created_at = instant(&self.calendario.criacao, "calendario.criacao")?;
        let lifetime = i64::from(self.calendario.expiracao.unwrap_or(86_400));
        let received = self
            .pix
            .into_iter()
            .map(|pix| {
                Ok(Received {
                    end_to_end_id: pix.end_to_end_id,
                    amount: money(&pix.valor, "pix[].valor")?,
                    at: instant(&pix.horario, "pix[].horario")?,
                })
            })
            .collect::<Result<Vec<_>, PixError>>()?;
        Ok(Charge {
            txid: self.txid,
            status,
            amount: money(&self.valor.original, "valor.original")?,
            key: self.chave,
            copia_e_cola: self.copia_e_cola.unwrap_or_default(),
            location: self
                .location
                .or_else(|| self.loc.and_then(|loc| loc.location)),
            created_at,
            expires_at: created_at + time::Duration::seconds(lifetime),
            received,
        })
    }
}

/// RFC 7807 as API Pix answers its errors.
#[derive(Deserialize)]
pub struct Problem {
    title: Option<String>,
    detail: Option<String>,
}

impl Problem {
    /// The problem's title and detail, cut short, with long digit runs (documents, account
    /// numbers a PSP may echo) masked.
    pub fn summary(body: &[u8], status: u16) -> String {
        let problem: Option<Problem> = serde_json::from_slice(body).ok();
        let text = match problem {
            Some(Problem {
                title: Some(title),
                detail: Some(detail),
            }) => format!("{title}: {detail}"),
            Some(Problem {
                title: Some(text), ..
            })
            | Some(Problem {
                detail: Some(text), ..
            }) => text,
            _ => format!("HTTP {status}"),
        };
        masked(&truncated(&text, 300))
    }
}

fn masked(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut run = String::new();
    for character in text.chars().chain(std::iter::once('\0')) {
        if character.is_ascii_digit() {
            run.push(character);
            continue;
        }
        if run.len() >= 11 {
            out.push_str("[redacted]");
        } else {
            out.push_str(&run);
        }
        run.clear();
        if character != '\0' {
            out.push(character);
        }
    }
    out
}

#[derive(Deserialize)]
pub struct TokenAnswer {
    pub access_token: String,
    pub expires_in: Option<u64>,
}

#[derive(Deserialize)]
pub struct TokenRefusal {
    pub error: Option<String>,
}

#[derive(Serialize)]
pub struct WebhookBody<'a> {
    #[serde(rename = "webhookUrl")]
    pub webhook_url: &'a str,
}

#[derive(Deserialize)]
pub struct WebhookAnswer {
    #[serde(rename = "webhookUrl")]
    pub webhook_url: String,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn amounts_are_written_from_minor_units() {
        let brl = |minor| Money::new(minor, iso_currency::Currency::BRL);
        assert_eq!(decimal(brl(12345)).unwrap(), "123.45");
        assert_eq!(decimal(brl(5)).unwrap(), "0.05");
        assert_eq!(decimal(brl(100)).unwrap(), "1.00");
        assert!(decimal(brl(0)).is_err());
        assert!(decimal(Money::new(100, iso_currency::Currency::USD)).is_err());
    }

    #[test]
    fn problems_never_echo_a_document() {
        let body = br#"{"type":"x","title":"Cobranca invalida","status":400,"detail":"devedor.cpf 12345678909 invalido"}"#;
        let summary = Problem::summary(body, 400);
        assert!(!summary.contains("12345678909"), "{summary}");
        assert!(summary.contains("Cobranca invalida"), "{summary}");
        assert_eq!(Problem::summary(b"<html>", 418), "HTTP 418");
    }
}
