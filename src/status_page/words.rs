//! The page's words in the merchant's language, chosen from the browser's `Accept-Language`
//! (Brazilian merchants are who BCP is for; everyone else reads English). The script's words
//! travel as `data-*` attributes, so the script itself (hashed in the policy) never changes.

/// A language the page speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    English,
    Portuguese,
}

impl Language {
    /// The browser's preferred language among those the page speaks, by `q` weight and then by
    /// order; English when it names none of them.
    pub fn from_accept_language(header: Option<&str>) -> Self {
        let mut best: Option<(u16, Language)> = None;
        for entry in header.unwrap_or_default().split(',') {
            let mut parts = entry.split(';');
            let tag = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
            let weight = parts
                .filter_map(|part| part.trim().strip_prefix("q="))
                .find_map(quality)
                .unwrap_or(1000);
            let language = match tag.split('-').next().unwrap_or_default() {
                "pt" => Language::Portuguese,
                "en" | "*" => Language::English,
                _ => continue,
            };
            if weight > 0 && best.is_none_or(|(top, _)| weight > top) {
                best = Some((weight, language));
            }
        }
        best.map_or(Language::English, |(_, language)| language)
    }

    pub fn words(self) -> &'static Words {
        match self {
            Language::English => &ENGLISH,
            Language::Portuguese => &PORTUGUESE,
        }
    }
}

/// A `q` value in thousandths (`q=0.8` is 800), as RFC 9110 writes it: at most three decimals.
fn quality(text: &str) -> Option<u16> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if fraction.len() > 3 || !fraction.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    let thousandths = format!("{fraction:0<3}").parse::<u16>().ok()?;
    match whole {
        "0" => Some(thousandths),
        "1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

pub struct Words {
    pub lang: &'static str,
    pub tagline: &'static str,
    pub store: &'static str,
    pub shop: &'static str,
    pub platform: &'static str,
    pub currency: &'static str,
    pub storefront: &'static str,
    pub upstream: &'static str,
    pub store_answers: &'static str,
    pub store_fails: &'static str,
    pub store_slow: &'static str,
    pub agents: &'static str,
    pub version: &'static str,
    pub mcp_endpoint: &'static str,
    pub rest_endpoint: &'static str,
    pub discovery: &'static str,
    pub copy: &'static str,
    pub copied: &'static str,
    pub negotiation: &'static str,
    pub negotiation_on: &'static str,
    pub negotiation_off: &'static str,
    pub default_profile: &'static str,
    /// Followed by the `meta["ucp-agent"].profile` code and `no_profile_tail`.
    pub no_profile: &'static str,
    pub no_profile_tail: &'static str,
    pub bearer: &'static str,
    pub bearer_required: &'static str,
    pub none: &'static str,
    pub since_start: &'static str,
    pub up: &'static str,
    pub no_calls: &'static str,
    pub tool: &'static str,
    pub calls: &'static str,
    pub by_outcome: &'static str,
    pub last_errors: &'static str,
    pub no_errors: &'static str,
    pub when: &'static str,
    pub outcome: &'static str,
    pub code: &'static str,
    pub reason: &'static str,
    /// Followed by the `/metrics` code.
    pub counted: &'static str,
    pub playground: &'static str,
    /// Followed by the `[server] transports` code and `rest_only_tail`.
    pub rest_only: &'static str,
    pub rest_only_tail: &'static str,
    /// Followed by `search_catalog`, `and`, `get_product` and `playground_tail`.
    pub playground_intro: &'static str,
    pub and: &'static str,
    pub playground_tail: &'static str,
    pub search: &'static str,
    pub search_hint: &'static str,
    pub agent_profile: &'static str,
    pub bearer_token: &'static str,
    pub profile_default: &'static str,
    pub profile_negotiation: &'static str,
    pub profile_any: &'static str,
    pub calling: &'static str,
    pub products: &'static str,
    pub of: &'static str,
    pub available: &'static str,
    pub unavailable: &'static str,
    /// The decimal separator of amounts.
    pub decimal: &'static str,
    pub load: &'static str,
    pub in_flight_of: &'static str,
    pub unbounded: &'static str,
    pub queued: &'static str,
    pub waited: &'static str,
    pub on_average: &'static str,
    pub turned_away: &'static str,
}

const ENGLISH: Words = Words {
    lang: "en",
    tagline: "what AI shopping agents see of this store",
    store: "Store",
    shop: "Shop",
    platform: "Platform",
    currency: "Currency",
    storefront: "Storefront",
    upstream: "Upstream",
    store_answers: "the store answers",
    store_fails: "the store does not answer (see the log, or run bcp-bridge doctor)",
    store_slow: "the store did not answer within 3 s",
    agents: "What agents use",
    version: "version",
    mcp_endpoint: "MCP endpoint",
    rest_endpoint: "REST endpoint",
    discovery: "Discovery",
    copy: "Copy",
    copied: "Copied",
    negotiation: "Negotiation",
    negotiation_on: "on: each agent's profile is fetched and its version checked",
    negotiation_off: "off: any profile URL is accepted as it is",
    default_profile: "Default agent profile",
    no_profile: "none: calls without ",
    no_profile_tail: " are refused",
    bearer: "Bearer token",
    bearer_required: "required (Authorization: Bearer)",
    none: "none",
    since_start: "Since start",
    up: "up",
    no_calls: "No tool calls yet.",
    tool: "Tool",
    calls: "Calls",
    by_outcome: "By outcome",
    last_errors: "Last errors",
    no_errors: "None.",
    when: "When (UTC)",
    outcome: "Outcome",
    code: "Code",
    reason: "Reason",
    counted: "Counted in memory since start; no buyer data is kept. Prometheus metrics: ",
    playground: "Playground",
    rest_only: "The playground speaks MCP, and ",
    rest_only_tail: " serves none: use the REST endpoint above (docs/agents/rest.md).",
    playground_intro: "Calls ",
    and: " and ",
    playground_tail: " on the real MCP endpoint, as an agent would.",
    search: "Search",
    search_hint: "running shoes",
    agent_profile: "Agent profile",
    bearer_token: "Bearer token",
    profile_default: "empty: served as the default profile",
    profile_negotiation: "negotiation is on: give a profile this bridge can fetch, or set [agents] default_profile",
    profile_any: "negotiation is off, so any URL is accepted",
    calling: "Calling…",
    products: "product(s)",
    of: "of",
    available: "available",
    unavailable: "unavailable",
    decimal: ".",
    load: "Store load",
    in_flight_of: "requests in flight, at most",
    unbounded: "requests in flight, no bound set",
    queued: "waiting",
    waited: "waited for a free slot",
    on_average: "ms on average",
    turned_away: "turned away busy",
};

const PORTUGUESE: Words = Words {
    lang: "pt-BR",
    tagline: "o que os agentes de compra com IA veem desta loja",
    store: "Loja",
    shop: "Loja",
    platform: "Plataforma",
    currency: "Moeda",
    storefront: "Vitrine",
    upstream: "Conexão com a loja",
    store_answers: "a loja responde",
    store_fails: "a loja não responde (veja o log ou rode bcp-bridge doctor)",
    store_slow: "a loja não respondeu em 3 s",
    agents: "O que os agentes usam",
    version: "versão",
    mcp_endpoint: "Endpoint MCP",
    rest_endpoint: "Endpoint REST",
    discovery: "Descoberta",
    copy: "Copiar",
    copied: "Copiado",
    negotiation: "Negociação",
    negotiation_on: "ligada: o perfil de cada agente é buscado e sua versão conferida",
    negotiation_off: "desligada: qualquer URL de perfil é aceita como está",
    default_profile: "Perfil de agente padrão",
    no_profile: "nenhum: chamadas sem ",
    no_profile_tail: " são recusadas",
    bearer: "Token bearer",
    bearer_required: "obrigatório (Authorization: Bearer)",
    none: "nenhum",
    since_start: "Desde o início",
    up: "no ar há",
    no_calls: "Nenhuma chamada de ferramenta ainda.",
    tool: "Ferramenta",
    calls: "Chamadas",
    by_outcome: "Por resultado",
    last_errors: "Últimos erros",
    no_errors: "Nenhum.",
    when: "Quando (UTC)",
    outcome: "Resultado",
    code: "Código",
    reason: "Motivo",
    counted: "Contado em memória desde o início; nenhum dado de comprador é guardado. Métricas Prometheus: ",
    playground: "Teste",
    rest_only: "O teste fala MCP, e ",
    rest_only_tail: " não serve nenhum: use o endpoint REST acima (docs/agents/rest.md).",
    playground_intro: "Chama ",
    and: " e ",
    playground_tail: " no endpoint MCP de verdade, como um agente faria.",
    search: "Buscar",
    search_hint: "tênis de corrida",
    agent_profile: "Perfil do agente",
    bearer_token: "Token bearer",
    profile_default: "vazio: atendido como o perfil padrão",
    profile_negotiation: "a negociação está ligada: informe um perfil que esta ponte consiga buscar, ou defina [agents] default_profile",
    profile_any: "a negociação está desligada, então qualquer URL é aceita",
    calling: "Chamando…",
    products: "produto(s)",
    of: "de",
    available: "disponível",
    unavailable: "indisponível",
    decimal: ",",
    load: "Carga na loja",
    in_flight_of: "requisições em andamento, no máximo",
    unbounded: "requisições em andamento, sem limite definido",
    queued: "na fila",
    waited: "esperaram vaga",
    on_average: "ms em média",
    turned_away: "recusadas por lotação",
};

#[cfg(test)]
mod tests {
    use super::Language::{English, Portuguese};
    use super::*;

    #[test]
    fn the_browser_language_picks_the_words() {
        assert_eq!(Language::from_accept_language(None), English);
        assert_eq!(
            Language::from_accept_language(Some("pt-BR,pt;q=0.9,en;q=0.8")),
            Portuguese
        );
        assert_eq!(Language::from_accept_language(Some("pt-PT")), Portuguese);
        assert_eq!(
            Language::from_accept_language(Some("en-US,pt-BR;q=0.5")),
            English
        );
        assert_eq!(
            Language::from_accept_language(Some("de-DE,pt;q=0.7")),
            Portuguese
        );
        assert_eq!(Language::from_accept_language(Some("fr,de")), English);
        assert_eq!(Language::from_accept_language(Some("pt;q=0,en")), English);
        assert_eq!(
            Language::from_accept_language(Some("en;q=0.2,pt-BR;q=0.9")),
            Portuguese
        );
        assert_eq!(
            Language::from_accept_language(Some("pt;q=garbage")),
            Portuguese
        );
    }
}
