//! The page's HTML. Every value that is not a literal of this file goes through `escape`:
//! the shop name and other store text are written by the merchant (or whoever controls the
//! store), URLs by the operator, and none of it may become markup.

use std::fmt::Write;
use std::time::SystemTime;

use super::PageContext;

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
fn copyable(out: &mut String, label: &str, value: &str, id: &str) {
    let value = escape(value);
    let _ = write!(
        out,
        r#"<dt>{label}</dt><dd><code id="{id}">{value}</code> <button type="button" class="copy" data-copy="{id}">Copy</button></dd>"#
    );
}

fn store_section(out: &mut String, context: &PageContext, health: &Health) {
    let store = context.platform.info();
    let (class, words) = match health {
        Health::Ready => ("ok", "the store answers"),
        Health::Failing => (
            "bad",
            "the store does not answer (see the log, or run bcp-bridge doctor)",
        ),
        Health::TimedOut => ("bad", "the store did not answer within 3 s"),
    };
    let _ = write!(
        out,
        r#"<section><h2>Store</h2><dl><dt>Shop</dt><dd id="shop-name">{}</dd><dt>Platform</dt><dd id="platform">{}</dd><dt>Currency</dt><dd>{}</dd><dt>Storefront</dt><dd><code>{}</code></dd><dt>Upstream</dt><dd id="health" class="{class}">{words}</dd></dl></section>"#,
        escape(&store.name),
        escape(store.platform),
        escape(store.currency.code()),
        escape(&store.storefront_url),
    );
}

fn agents_section(out: &mut String, context: &PageContext) {
    out.push_str("<section><h2>What agents use</h2>");
    for (index, door) in context.doors.iter().enumerate() {
        let _ = write!(
            out,
            r#"<h3>{} <small>version {}</small></h3><dl>"#,
            escape(door.service),
            escape(door.version)
        );
        if let Some(mcp_url) = &door.mcp_url {
            copyable(out, "MCP endpoint", mcp_url, &format!("mcp-url-{index}"));
        }
        if let Some(rest_url) = &door.rest_url {
            copyable(out, "REST endpoint", rest_url, &format!("rest-url-{index}"));
        }
        copyable(
            out,
            "Discovery",
            &door.profile_url,
            &format!("profile-url-{index}"),
        );
        out.push_str("</dl>");
    }
    let negotiation = if context.negotiation {
        "on: each agent's profile is fetched and its version checked"
    } else {
        "off: any profile URL is accepted as it is"
    };
    let default_profile = match &context.default_profile {
        Some(profile) => format!("<code>{}</code>", escape(profile)),
        None => {
            "none: calls without <code>meta[\"ucp-agent\"].profile</code> are refused".to_owned()
        }
    };
    let bearer = if context.bearer_required {
        "required (Authorization: Bearer)"
    } else {
        "none"
    };
    let _ = write!(
        out,
        "<dl><dt>Negotiation</dt><dd>{negotiation}</dd><dt>Default agent profile</dt><dd>{default_profile}</dd><dt>Bearer token</dt><dd>{bearer}</dd></dl></section>"
    );
}

fn activity_section(out: &mut String, context: &PageContext) {
    let activity = &context.activity;
    let _ = write!(
        out,
        r#"<section><h2>Since start <small>(up {})</small></h2>"#,
        uptime(activity.uptime().as_secs())
    );
    let counts = activity.counts();
    if counts.is_empty() {
        out.push_str(r#"<p id="calls">No tool calls yet.</p>"#);
    } else {
        out.push_str(
            r#"<table id="calls"><thead><tr><th>Tool</th><th>Calls</th><th>By outcome</th></tr></thead><tbody>"#,
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
    out.push_str("<h3>Last errors</h3>");
    if errors.is_empty() {
        out.push_str(r#"<p id="errors">None.</p>"#);
    } else {
        out.push_str(
            r#"<table id="errors"><thead><tr><th>When (UTC)</th><th>Tool</th><th>Outcome</th><th>Code</th><th>Reason</th></tr></thead><tbody>"#,
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
    out.push_str("<p class=\"note\">Counted in memory since start; no buyer data is kept. Prometheus metrics: <code>/metrics</code>.</p></section>");
}

fn playground_section(out: &mut String, context: &PageContext) {
    let Some(mcp_path) = context
        .doors
        .iter()
        .find_map(|door| door.mcp_path.as_deref())
    else {
        out.push_str(r#"<section id="playground"><h2>Playground</h2><p class="note">The playground speaks MCP, and <code>[server] transports</code> serves none: use the REST endpoint above (README, "REST").</p></section>"#);
        return;
    };
    // With a default profile the playground sends no meta at all, as a stock MCP client does.
    let (profile_value, profile_hint) = match &context.default_profile {
        Some(profile) => (
            String::new(),
            format!(
                "empty: served as the default profile {}",
                escape(profile)
            ),
        ),
        None if context.negotiation => (
            String::new(),
            "negotiation is on: give a profile this bridge can fetch, or set [agents] default_profile".to_owned(),
        ),
        None => (
            "https://agent.example/profile.json".to_owned(),
            "negotiation is off, so any URL is accepted".to_owned(),
        ),
    };
    let token_field = if context.bearer_required {
        r#"<label>Bearer token <input id="token" type="password" autocomplete="off"></label>"#
    } else {
        ""
    };
    let _ = write!(
        out,
        r#"<section id="playground" data-mcp-path="{}"><h2>Playground</h2><p>Calls <code>search_catalog</code> and <code>get_product</code> on the real MCP endpoint, as an agent would.</p><form id="search-form"><label>Search <input id="q" type="search" value="" placeholder="running shoes"></label><label>Agent profile <input id="profile" type="url" value="{}" placeholder="https://your-agent.example/.well-known/ucp"></label>{token_field}<button id="search" type="submit">Search</button></form><p class="note">Agent profile: {profile_hint}.</p><p id="play-status" role="status"></p><div class="split"><div id="cards" data-state="idle"></div><pre id="raw" aria-label="raw JSON-RPC reply"></pre></div></section>"#,
        escape(mcp_path),
        escape(&profile_value),
    );
}

pub fn page(context: &PageContext, health: Health, script: &str, style: &str) -> String {
    let store = context.platform.info();
    let mut out = String::with_capacity(16 * 1024);
    let _ = write!(
        out,
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer"><title>{} · bcp-bridge</title><style>{style}</style></head><body><header><h1>{}</h1><p>bcp-bridge {} · what AI shopping agents see of this store</p></header><main>"#,
        escape(&store.name),
        escape(&store.name),
        env!("CARGO_PKG_VERSION"),
    );
    store_section(&mut out, context, &health);
    agents_section(&mut out, context);
    activity_section(&mut out, context);
    playground_section(&mut out, context);
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
