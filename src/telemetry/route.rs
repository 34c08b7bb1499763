//! The route template of an upstream URL: what a span may say about where a request went.
//! Paths carry cart tokens, order keys, product and customer ids; every segment that is not
//! a plain word (letters, `-`, `_`, `.`) or an API version (`v1`, `v3`) becomes `{id}`, and
//! the query (keys, filters, buyer input) is dropped.

/// Characters of one kept segment at most: a longer word is more likely a slug or a token.
const MAX_WORD: usize = 40;

/// `/wp-json/wc/store/v1/cart/items/9f3a…?x=1` → `/wp-json/wc/store/v1/cart/items/{id}`.
pub fn template(path: &str) -> String {
    let path = path.split(['?', '#']).next().unwrap_or("");
    let mut out = String::with_capacity(path.len());
    for (index, segment) in path.split('/').enumerate() {
        if index > 0 {
            out.push('/');
        }
        if segment.is_empty() || is_word(segment) || is_version(segment) {
            out.push_str(segment);
        } else {
            out.push_str("{id}");
        }
    }
    out
}

fn is_word(segment: &str) -> bool {
    segment.len() <= MAX_WORD
        && segment
            .bytes()
            .all(|byte| byte.is_ascii_alphabetic() || matches!(byte, b'-' | b'_' | b'.'))
}

fn is_version(segment: &str) -> bool {
    segment.len() <= 4
        && segment
            .strip_prefix('v')
            .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_tokens_and_queries_never_reach_the_template() {
        assert_eq!(
            template("/wp-json/wc/store/v1/cart/add-item"),
            "/wp-json/wc/store/v1/cart/add-item"
        );
        assert_eq!(
            template("/wp-json/wc/v3/products/123?include=4,5&consumer_key=ck_x"),
            "/wp-json/wc/v3/products/{id}"
        );
        assert_eq!(
            template("/api/checkout/pub/orderForm/3b1f0c9e2d8a4f6b/items"),
            "/api/checkout/pub/orderForm/{id}/items"
        );
        assert_eq!(template("/orders/buyer@example.com"), "/orders/{id}");
        assert_eq!(template("/a/%20b/c"), "/a/{id}/c");
        assert_eq!(template(&format!("/{}", "a".repeat(41))), "/{id}");
        assert_eq!(template("/"), "/");
    }
}
