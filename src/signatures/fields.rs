//! The structured header fields a signed request carries (RFC 8941 / 9651, parsed by `sfv`):
//! `Signature-Input` and `Signature` (RFC 9421 §4), `Content-Digest` (RFC 9530) and
//! `UCP-Agent`.

use http::HeaderMap;
use sfv::{BareItem, Dictionary, FieldType, InnerList, ListEntry, Parser};

use super::SignatureError;
use crate::logging::echo;
use crate::negotiation::NegotiationError;

pub(super) const SIGNATURE_INPUT: &str = "signature-input";
pub(super) const SIGNATURE: &str = "signature";
pub(super) const CONTENT_DIGEST: &str = "content-digest";
pub(super) const UCP_AGENT: &str = "ucp-agent";

/// One field's value as RFC 9421 §2.1 reads it: every line of the name, trimmed, joined by
/// ", ". `None` when absent; an error when a line is not visible ASCII.
pub(super) fn combined(headers: &HeaderMap, name: &str) -> Result<Option<String>, SignatureError> {
    let mut lines = Vec::new();
    for value in headers.get_all(name) {
        let text = value.to_str().map_err(|_| {
            SignatureError::Invalid(format!("the {name} header is not visible ASCII"))
        })?;
        lines.push(text.trim());
    }
    Ok((!lines.is_empty()).then(|| lines.join(", ")))
}

pub(super) fn dictionary(
    headers: &HeaderMap,
    name: &str,
) -> Result<Option<Dictionary>, SignatureError> {
    let Some(text) = combined(headers, name)? else {
        return Ok(None);
    };
    Parser::new(&text)
        .parse::<Dictionary>()
        .map(Some)
        .map_err(|error| {
            SignatureError::Invalid(format!(
                "the {name} header is not a structured-field dictionary ({error})"
            ))
        })
}

/// One signature of the request: its label, covered components and parameters, and value.
pub(super) struct Candidate {
    pub label: String,
    pub input: InnerList,
    pub value: Vec<u8>,
}

/// Every labelled signature, in `Signature-Input` order. `Ok(None)` when the request carries
/// neither header; one without the other is `signature_missing`.
pub(super) fn candidates(headers: &HeaderMap) -> Result<Option<Vec<Candidate>>, SignatureError> {
    let inputs = dictionary(headers, SIGNATURE_INPUT)?;
    let values = dictionary(headers, SIGNATURE)?;
    let (inputs, values) = match (inputs, values) {
        (None, None) => return Ok(None),
        (Some(inputs), Some(values)) => (inputs, values),
        (Some(_), None) => {
            return Err(SignatureError::Missing(
                "Signature-Input is present but the Signature header is not".to_owned(),
            ));
        }
        (None, Some(_)) => {
            return Err(SignatureError::Missing(
                "Signature is present but the Signature-Input header is not".to_owned(),
            ));
        }
    };
    let mut found = Vec::new();
    for (label, entry) in inputs {
        let label = label.as_str().to_owned();
        let ListEntry::InnerList(input) = entry else {
            return Err(SignatureError::Invalid(format!(
                "Signature-Input member {} is not an inner list of components",
                echo(&label)
            )));
        };
        let value = match values.get(label.as_str()) {
            Some(ListEntry::Item(item)) => item.bare_item.as_byte_sequence().map(<[u8]>::to_vec),
            _ => None,
        };
        let Some(value) = value else {
            return Err(SignatureError::Missing(format!(
                "no Signature byte sequence labelled {} matches its Signature-Input",
                echo(&label)
            )));
        };
        found.push(Candidate {
            label,
            input,
            value,
        });
    }
    if found.is_empty() {
        return Err(SignatureError::Missing(
            "Signature-Input names no signature".to_owned(),
        ));
    }
    Ok(Some(found))
}

/// The `sha-256` member of `Content-Digest`; `Ok(None)` when the header is absent.
pub(super) fn sha256_digest(headers: &HeaderMap) -> Result<Option<Vec<u8>>, SignatureError> {
    let Some(digests) = dictionary(headers, CONTENT_DIGEST).map_err(|_| {
        SignatureError::DigestMismatch(
            "Content-Digest is not a structured-field dictionary".to_owned(),
        )
    })?
    else {
        return Ok(None);
    };
    match digests.get("sha-256") {
        Some(ListEntry::Item(item)) => match item.bare_item.as_byte_sequence() {
            Some(bytes) => Ok(Some(bytes.to_vec())),
            None => Err(SignatureError::DigestMismatch(
                "Content-Digest sha-256 is not a byte sequence".to_owned(),
            )),
        },
        // SIG-010: sha-256 is the one algorithm UCP implementations use.
        _ => Err(SignatureError::DigestMismatch(
            "Content-Digest carries no sha-256 digest (UCP requires sha-256)".to_owned(),
        )),
    }
}

/// The signer's profile URL from `UCP-Agent: profile="https://…"` (SIG-039, SIG-040).
pub(super) fn ucp_agent_profile(headers: &HeaderMap) -> Result<Option<String>, SignatureError> {
    let invalid =
        |why: &str| SignatureError::Profile(NegotiationError::invalid_url(why.to_owned()));
    let Some(text) = combined(headers, UCP_AGENT)? else {
        return Ok(None);
    };
    let dictionary = Parser::new(&text)
        .parse::<Dictionary>()
        .map_err(|_| invalid("the UCP-Agent header is not a structured-field dictionary"))?;
    match dictionary.get("profile") {
        Some(ListEntry::Item(item)) => match &item.bare_item {
            BareItem::String(profile) => Ok(Some(profile.as_str().to_owned())),
            _ => Err(invalid(
                "UCP-Agent profile must be a quoted string holding an https URL",
            )),
        },
        _ => Err(invalid("the UCP-Agent header has no profile member")),
    }
}

/// RFC 9421 §2.3: `@signature-params` is the serialized inner list.
pub(super) fn serialize_inner_list(list: &InnerList) -> Option<String> {
    vec![ListEntry::InnerList(list.clone())].serialize()
}

/// A dictionary member's value serialized on its own (RFC 9421 §2.1.2, `;key=`).
pub(super) fn serialize_member(entry: &ListEntry) -> Option<String> {
    match entry {
        ListEntry::Item(item) => Some(item.serialize()),
        ListEntry::InnerList(_) => vec![entry.clone()].serialize(),
    }
}
