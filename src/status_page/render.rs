//! The page's HTML. Every value that is not a literal of this file goes through `escape`:
//! the shop name and other store text are written by the merchant (or whoever controls the
//! store), URLs by the operator, and none of it may become markup.

use std::fmt::Write;
use std::time::SystemTime;

use super::PageContext;
use super::words::Words;
use crate::platform::upstream::LoadReading;

#[derive(Debug, Clone, Copy)]
pub enum Health {
    Ready,
    Failing,
    TimedOut,
}

/// HTML-escapes text for element content and quoted attribute values alike.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}

fn timestamp(at: SystemTime) -> String {
    time::OffsetDateTime::from(at)
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "-".to_owned())
}

fn uptime(seconds: u64) -> String {
    let (days, hours, minutes) = (seconds / 86_400, seconds / 3_600 % 24, seconds / 60 % 60);
    if days > 0 {
        format!("{days} d {hours} h")
    } else if hours > 0 {
        format!("{hours} h {minutes} min")
    } else {
        format!("{minutes} min {} s", seconds % 60)
    }
}

/// A value with a button that copies it.
fn copyable(out: &mut String, words: &Words, label: &str, value: &str, id: &str) {
    let value = escape(value);
    let _ = write!(
        out,
        r#"<dt>{label}</dt><dd><code id="{id}">{value}</code> <button type="button" class="copy" data-copy="{id}">{}</button></dd>"#,
        words.copy
    );
}

fn store_section(out: &mut String, words: &Words, context: &PageContext, health: &Health) {
    let platform = &context.platform;
    let store = platform.info();
    let (class, state) = match health {
        Health::Ready => ("ok", words.store_answers),
        Health::Failing => ("bad", words.store_fails),
        Health::TimedOut => ("bad", words.store_slow),
    };
    let _ = write!(
        out,
        r#"<section><h2>{}</h2><dl><dt>{}</dt><dd id="shop-name">{}</dd><dt>{}</dt><dd id="platform">{}</dd><dt>{}</dt><dd>{}</dd><dt>{}</dt><dd><code>{}</code></dd><dt>{}</dt><dd id="health" class="{class}">{state}</dd>"#,
        words.store,
        words.shop,
        escape(&store.name),
        words.platform,
        escape(store.platform),
        words.currency,
        escape(store.currency.code()),
        words.storefront,
        escape(&store.storefront_url),
        words.upstream,
    );
    if let Some(load) = &platform.load {
        load_row(out, words, &load.reading());
    }
    out.push_str("</dl></section>");
}

/// `[upstream] max_in_flight` at work: how busy the bridge keeps the store.
fn load_row(out: &mut String, words: &Words, load: &LoadReading) {
    let capacity = if load.capacity == 0 {
        words.unbounded.to_owned()
    } else {
        format!("{} {}", words.in_flight_of, load.capacity)
    };
    let _ = write!(
        out,
        r#"<dt>{}</dt><dd id="store-load">{} {capacity} · {} {} · {} {}, {} {} · {} {}</dd>"#,
        words.load,
        load.in_flight,
        load.queued,
        words.queued,
        load.waits,
        words.waited,
        load.mean_wait.as_millis(),
        words.on_average,
        load.refused,
        words.turned_away,
    );
}

fn agents_section(out: &mut String, words: &Words, context: &PageContext) {
    let _ = write!(out, "<section><h2>{}</h2>", words.agents);
    for (index, door) in context.doors.iter().enumerate() {
        let _ = write!(
            out,
            r#"<h3>{} <small>{} {}</small></h3><dl>"#,
            escape(door.service),
            words.version,
            escape(door.version)
        );
        if let Some(mcp_url) = &door.mcp_url {
            let id = format!("mcp-url-{index}");
            copyable(out, words, words.mcp_endpoint, mcp_url, &id);
        }
        if let Some(rest_url) = &door.rest_url {
            let id = format!("rest-url-{index}");
            copyable(out, words, words.rest_endpoint, rest_url, &id);
        }
        copyable(
            out,
            words,
            words.discovery,
            &door.profile_url,
            &format!("profile-url-{index}"),
        );
        out.push_str("</dl>");
    }
    let negotiation = if context.negotiation {
        words.negotiation_on
    } else {
        words.negotiation_off
    };
    let default_profile = match &context.default_profile {
        Some(profile) => format!("<code>{}</code>", escape(profile)),
        None => format!(
            "{}<code>meta[\"ucp-agent\"].profile</code>{}",
            words.no_profile, words.no_profile_tail
        ),
    };
    let bearer = if context.bearer_required {
        words.bearer_required
    } else {
        words.none
    };
    let _ = write!(
        out,
        "<dl><dt>{}</dt><dd>{negotiation}</dd><dt>{}</dt><dd>{default_profile}</dd><dt>{}</dt><dd>{bearer}</dd></dl></section>",
        words.negotiation, words.default_profile, words.bearer
    );
}

fn activity_section(out: &mut String, words: &Words, context: &PageContext) {
    let activity = &context.activity;
    let _ = write!(
        out,
        r#"<section><h2>{} <small>({} {})</small></h2>"#,
        words.since_start,
        words.up,
        uptime(activity.uptime().as_secs())
    );
    let counts = activity.counts();
    if counts.is_empty() {
        let _ = write!(out, r#"<p id="calls">{}</p>"#, words.no_calls);
    } else {
        let _ = write!(
            out,
            r#"<table id="calls"><thead><tr><th>{}</th><th>{}</th><th>{}</th></tr></thead><tbody>"#,
            words.tool, words.calls, words.by_outcome
        );
        for row in counts {
            let outcomes = row
                .outcomes
                .iter()
                .map(|(outcome, calls)| format!("{outcome} {calls}"))
                .collect::<Vec<_>>()
                .join(", ");
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(row.tool),
                row.total(),
                escape(&outcomes)
            );
        }
        out.push_str("</tbody></table>");
    }
    let errors = activity.recent_errors();
    let _ = write!(out, "<h3>{}</h3>", words.last_errors);
    if errors.is_empty() {
        let _ = write!(out, r#"<p id="errors">{}</p>"#, words.no_errors);
    } else {
        let _ = write!(
            out,
            r#"<table id="errors"><thead><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr></thead><tbody>"#,
            words.when, words.tool, words.outcome, words.code, words.reason
        );
        for error in errors {
            let code = error
                .code
                .map(|code| code.to_string())
                .unwrap_or_else(|| "-".to_owned());
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
                escape(&timestamp(error.at)),
                escape(error.tool),
                escape(error.outcome),
                escape(&code),
                escape(&error.reason)
            );
        }
        out.push_str("</tbody></table>");
    }
    let _ = write!(
        out,
        "<p class=\"note\">{}<code>/metrics</code>.</p></section>",
        words.counted
    );
}

fn playground_section(out: &mut String, words: &Words, context: &PageContext) {
    let Some(mcp_path) = context
        .doors
        .iter()
        .find_map(|door| door.mcp_path.as_deref())
    else {
        let _ = write!(
            out,
            r#"<section id="playground"><h2>{}</h2><p class="note">{}<code>[server] transports</code>{}</p></section>"#,
            words.playground,
            words.rest_only,
            escape(words.rest_only_tail)
        );
        return;
    };
    // With a default profile the playground sends no meta at all, as a stock MCP client does.
    let (profile_value, profile_hint) = match &context.default_profile {
        Some(profile) => (
            String::new(),
            format!("{} {}", words.profile_default, escape(profile)),
        ),
        None if context.negotiation => (String::new(), escape(words.profile_negotiation)),
        None => (
            "https://agent.example/profile.json".to_owned(),
            escape(words.profile_any),
        ),
    };
    let token_field = if context.bearer_required {
        format!(
            r#"<label>{} <input id="token" type="password" autocomplete="off"></label>"#,
            words.bearer_token
        )
    } else {
        String::new()
    };
    let _ = write!(
        out,
        r#"<section id="playground" data-mcp-path="{}"><h2>{}</h2><p>{}<code>search_catalog</code>{}<code>get_product</code>{}</p><form id="search-form"><label>{} <input id="q" type="search" value="" placeholder="{}"></label><label>{} <input id="profile" type="url" value="{}" placeholder="https://your-agent.example/.well-known/ucp"></label>{token_field}<button id="search" type="submit">{}</button></form><p class="note">{}: {profile_hint}.</p><p id="play-status" role="status"></p><div class="split"><div id="cards" data-state="idle"></div><pre id="raw" aria-label="raw JSON-RPC reply"></pre></div></section>"#,
        escape(mcp_path),
        words.playground,
        words.playground_intro,
        words.and,
        words.playground_tail,
        words.search,
        words.search_hint,
        words.agent_profile,
        escape(&profile_value),
        words.search,
        words.agent_profile,
    );
}

/// The script's words, as `data-*` attributes of `<body>` (the script is fixed by its hash).
fn script_words(words: &Words) -> String {
    [
        ("copy", words.copy),
        ("copied", words.copied),
        ("calling", words.calling),
        ("products", words.products),
        ("of", words.of),
        ("available", words.available),
        ("unavailable", words.unavailable),
        ("decimal", words.decimal),
    ]
    .iter()
    .map(|(key, value)| format!(r#" data-word-{key}="{}""#, escape(value)))
    .collect()
}

pub fn page(
    context: &PageContext,
    words: &Words,
    health: Health,
    script: &str,
    style: &str,
) -> String {
    let store = context.platform.info();
    let mut out = String::with_capacity(16 * 1024);
    let _ = write!(
        out,
        r#"<!doctype html><html lang="{}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer"><title>{} · bcp-bridge</title><style>{style}</style></head><body{}><header><h1>{}</h1><p>bcp-bridge {} · {}</p></header><main>"#,
        words.lang,
        escape(&store.name),
        script_words(words),
        escape(&store.name),
        env!("CARGO_PKG_VERSION"),
        words.tagline,
    );
    store_section(&mut out, words, context, &health);
    agents_section(&mut out, words, context);
    activity_section(&mut out, words, context);
    playground_section(&mut out, words, context);
    let _ = write!(out, "</main><script>{script}</script></body></html>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_text_is_escaped() {
        assert_eq!(
            escape(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
    }

    #[test]
    fn uptime_reads_naturally() {
        assert_eq!(uptime(42), "0 min 42 s");
        assert_eq!(uptime(3_700), "1 h 1 min");
        assert_eq!(uptime(90_000), "1 d 1 h");
    }
}
