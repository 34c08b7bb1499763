//! WordPress hands out HTML-escaped names and messages; agents get plain text.

/// Decodes the entities WordPress actually emits (`&quot;`, `&#8211;`, `&#x2019;`, …).
pub fn decode_entities(input: &str) -> String {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(start) = rest.find('&') {
        out.push_str(&rest[..start]);
        let tail = &rest[start..];
        let decoded = tail.find(';').filter(|end| *end <= 10).and_then(|end| {
            let name = &tail[1..end];
            let character = match name {
                "amp" => Some('&'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "nbsp" => Some(' '),
                "ndash" => Some('–'),
                "mdash" => Some('—'),
                "ldquo" => Some('“'),
                "rdquo" => Some('”'),
                "lsquo" => Some('‘'),
                "rsquo" => Some('’'),
                "hellip" => Some('…'),
                _ => name
                    .strip_prefix("#x")
                    .or_else(|| name.strip_prefix("#X"))
                    .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                    .or_else(|| name.strip_prefix('#').and_then(|dec| dec.parse().ok()))
                    .and_then(char::from_u32),
            };
            character.map(|character| (character, end))
        });
        match decoded {
            Some((character, end)) => {
                out.push(character);
                rest = &tail[end + 1..];
            }
            None => {
                out.push('&');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// HTML description → plain text: tags dropped, block ends become spaces, entities decoded.
pub fn plain_text(html: &str) -> String {
    let mut text = String::with_capacity(html.len());
    let mut in_tag = false;
    for character in html.chars() {
        match character {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                text.push(' ');
            }
            _ if !in_tag => text.push(character),
            _ => {}
        }
    }
    decode_entities(&text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_what_woocommerce_sends() {
        assert_eq!(
            decode_entities("You cannot add &quot;Logo Tee &#8211; M, Blue&quot; &amp; more"),
            "You cannot add \"Logo Tee – M, Blue\" & more"
        );
        assert_eq!(decode_entities("a & b &bogus; &#x41;"), "a & b &bogus; A");
        assert_eq!(
            plain_text("<p>Soft&nbsp;cotton.</p><p>Fits <b>true</b></p>"),
            "Soft cotton. Fits true"
        );
    }
}
