//! The signature base of RFC 9421 §2.5: one line per covered component, then
//! `@signature-params`. Derived components of a request (`@method`, `@authority`, `@path`,
//! `@query`, `@request-target`) and header fields (whole, or one dictionary member with
//! `;key=`) are supported; any other component or component parameter makes the signature
//! unverifiable here, which is reported rather than guessed at.

use std::collections::HashSet;

use http::HeaderMap;
use sfv::{BareItem, Dictionary, FieldType, InnerList, Parser};

use super::SignatureError;
use super::fields::{combined, serialize_inner_list, serialize_member};
use crate::logging::echo;

/// The parts of the request the derived components read.
pub(super) struct Target<'a> {
    pub method: &'a str,
    pub authority: Option<String>,
    pub path: &'a str,
    pub query: Option<&'a str>,
    pub headers: &'a HeaderMap,
}

fn invalid(message: String) -> SignatureError {
    SignatureError::Invalid(message)
}

/// The names a signature covers, lower-case, in order; repeated or non-string entries are
/// refused (RFC 9421 §2.5).
pub(super) fn covered(input: &InnerList) -> Result<Vec<String>, SignatureError> {
    let mut names = Vec::new();
    let mut seen = HashSet::new();
    for item in &input.items {
        let BareItem::String(name) = &item.bare_item else {
            return Err(invalid(
                "a covered component is not a quoted string".to_owned(),
            ));
        };
        if !seen.insert(item.serialize()) {
            return Err(invalid(format!(
                "component {} is covered twice",
                echo(name.as_str())
            )));
        }
        names.push(name.as_str().to_owned());
    }
    Ok(names)
}

fn derived(target: &Target<'_>, name: &str) -> Result<String, SignatureError> {
    let value = match name {
        "@method" => target.method.to_owned(),
        "@authority" => target
            .authority
            .clone()
            .ok_or_else(|| invalid("the request has no authority to sign".to_owned()))?,
        "@path" if target.path.is_empty() => "/".to_owned(),
        "@path" => target.path.to_owned(),
        "@query" => format!("?{}", target.query.unwrap_or("")),
        "@request-target" => match target.query {
            Some(query) => format!("{}?{query}", target.path),
            None => target.path.to_owned(),
        },
        other => {
            return Err(invalid(format!(
                "derived component {} is not supported on requests here",
                echo(other)
            )));
        }
    };
    Ok(value)
}

fn field(target: &Target<'_>, name: &str, key: Option<&str>) -> Result<String, SignatureError> {
    let value = combined(target.headers, name)?.ok_or_else(|| {
        invalid(format!(
            "the signature covers the {} header, which the request lacks",
            echo(name)
        ))
    })?;
    let Some(key) = key else {
        return Ok(value);
    };
    let dictionary = Parser::new(&value).parse::<Dictionary>().map_err(|_| {
        invalid(format!(
            "{};key= covers a header that is not a dictionary",
            echo(name)
        ))
    })?;
    dictionary
        .get(key)
        .and_then(serialize_member)
        .ok_or_else(|| {
            invalid(format!(
                "the {} header has no member {}",
                echo(name),
                echo(key)
            ))
        })
}

/// The exact bytes the signer signed.
pub(super) fn signature_base(
    target: &Target<'_>,
    input: &InnerList,
) -> Result<String, SignatureError> {
    covered(input)?;
    let mut base = String::new();
    for item in &input.items {
        let BareItem::String(name) = &item.bare_item else {
            return Err(invalid(
                "a covered component is not a quoted string".to_owned(),
            ));
        };
        let name = name.as_str();
        if name != name.to_ascii_lowercase() {
            return Err(invalid(format!(
                "component {} must be lower-case",
                echo(name)
            )));
        }
        let mut key = None;
        for (param, value) in &item.params {
            match (param.as_str(), value) {
                ("key", BareItem::String(member)) if !name.starts_with('@') => {
                    key = Some(member.as_str());
                }
                (other, _) => {
                    return Err(invalid(format!(
                        "component parameter {} of {} is not supported here",
                        echo(other),
                        echo(name)
                    )));
                }
            }
        }
        let value = if name.starts_with('@') {
            derived(target, name)?
        } else {
            field(target, name, key)?
        };
        base.push_str(&item.serialize());
        base.push_str(": ");
        base.push_str(&value);
        base.push('\n');
    }
    let params = serialize_inner_list(input)
        .ok_or_else(|| invalid("the signature parameters cannot be serialized".to_owned()))?;
    base.push_str("\"@signature-params\": ");
    base.push_str(&params);
    Ok(base)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use http::HeaderValue;
    use sfv::{Dictionary, ListEntry};

    fn input(text: &str) -> InnerList {
        let dictionary: Dictionary = Parser::new(text).parse().unwrap();
        match dictionary.get("sig1").unwrap() {
            ListEntry::InnerList(list) => list.clone(),
            ListEntry::Item(_) => unreachable!(),
        }
    }

    #[test]
    fn the_base_matches_rfc_9421_layout() {
        let mut headers = HeaderMap::new();
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        headers.insert(
            "signature-agent",
            HeaderValue::from_static("sig1=\"https://a.example/.well-known/ucp\";type=jwks_uri"),
        );
        let target = Target {
            method: "POST",
            authority: Some("shop.example".to_owned()),
            path: "/ucp/mcp",
            query: None,
            headers: &headers,
        };
        let base = signature_base(
            &target,
            &input(r#"sig1=("@method" "@authority" "@path" "content-type" "signature-agent";key="sig1");created=1;keyid="k""#),
        )
        .unwrap();
        assert_eq!(
            base,
            "\"@method\": POST\n\"@authority\": shop.example\n\"@path\": /ucp/mcp\n\"content-type\": application/json\n\"signature-agent\";key=\"sig1\": \"https://a.example/.well-known/ucp\";type=jwks_uri\n\"@signature-params\": (\"@method\" \"@authority\" \"@path\" \"content-type\" \"signature-agent\";key=\"sig1\");created=1;keyid=\"k\""
        );
    }

    #[test]
    fn unknown_components_and_repeats_are_refused() {
        let headers = HeaderMap::new();
        let target = Target {
            method: "POST",
            authority: None,
            path: "/",
            query: None,
            headers: &headers,
        };
        for text in [
            r#"sig1=("@status")"#,
            r#"sig1=("@method" "@method")"#,
            r#"sig1=("content-type";sf)"#,
            r#"sig1=("x-missing")"#,
        ] {
            assert!(signature_base(&target, &input(text)).is_err(), "{text}");
        }
    }
}
