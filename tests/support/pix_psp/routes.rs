//! The stand-in's API Pix routes: OAuth2 token, `cob`, `webhook`, each answering RFC 7807
//! problems as the OpenAPI describes them.

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{post, put};
use base64::Engine as _;
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::{CLIENT_ID, CLIENT_SECRET, Charge, KEY, Shared, br_code};

pub(super) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/oauth/token", post(token))
        .route("/api/v2/cob/{txid}", put(put_cob).get(get_cob))
        .route("/api/v2/webhook/{chave}", put(put_webhook).get(get_webhook))
        .with_state(shared)
}

/// RFC 7807 as API Pix answers its errors.
fn problem(status: StatusCode, kind: &str, title: &str, detail: &str) -> Response {
    (
        status,
        [("content-type", "application/problem+json")],
        json!({
            "type": format!("https://pix.bcb.gov.br/api/v2/error/{kind}"),
            "title": title,
            "status": status.as_u16(),
            "detail": detail,
        })
        .to_string(),
    )
        .into_response()
}

/// Counts the call; the PSP's state of health answers before the route does.
fn arrive(shared: &Shared, route: &str) -> Option<Response> {
    let mut inner = shared.inner.lock().unwrap();
    *inner.calls.entry(route.to_owned()).or_insert(0) += 1;
    inner.down.map(|_| {
        problem(
            StatusCode::SERVICE_UNAVAILABLE,
            "ServicoIndisponivel",
            "Serviço Indisponível",
            "Serviço não está disponível no momento.",
        )
    })
}

fn authorized(shared: &Shared, headers: &HeaderMap) -> Option<Response> {
    let token = headers
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    let inner = shared.inner.lock().unwrap();
    let valid = token
        .and_then(|token| inner.tokens.get(token))
        .is_some_and(|expires| Instant::now() < *expires);
    (!valid).then(|| {
        problem(
            StatusCode::UNAUTHORIZED,
            "AcessoNegado",
            "Acesso Negado",
            "Token ausente, inválido ou expirado.",
        )
    })
}

async fn token(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: String) -> Response {
    if let Some(down) = arrive(&shared, "POST /token") {
        return down;
    }
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}"))
    );
    let basic = headers
        .get("authorization")
        .and_then(|value| value.to_str().ok());
    if basic != Some(expected.as_str()) {
        return (
            StatusCode::UNAUTHORIZED,
            [("content-type", "application/json")],
            json!({"error": "invalid_client", "error_description": "bad client credentials"})
                .to_string(),
        )
            .into_response();
    }
    if !body
        .split('&')
        .any(|pair| pair == "grant_type=client_credentials")
    {
        return (
            StatusCode::BAD_REQUEST,
            [("content-type", "application/json")],
            json!({"error": "unsupported_grant_type"}).to_string(),
        )
            .into_response();
    }
    let token = format!("psp-token-{}", uuid::Uuid::new_v4().simple());
    let mut inner = shared.inner.lock().unwrap();
    let life = inner.token_life;
    inner.tokens.insert(token.clone(), Instant::now() + life);
    axum::Json(json!({
        "access_token": token,
        "token_type": "Bearer",
        "expires_in": life.as_secs(),
        "scope": "cob.write cob.read webhook.write webhook.read",
    }))
    .into_response()
}

fn txid_valid(txid: &str) -> bool {
    (26..=35).contains(&txid.len()) && txid.bytes().all(|byte| byte.is_ascii_alphanumeric())
}

fn cob_invalid(detail: &str) -> Response {
    problem(
        StatusCode::BAD_REQUEST,
        "CobOperacaoInvalida",
        "Cobrança inválida.",
        detail,
    )
}

async fn put_cob(
    State(shared): State<Arc<Shared>>,
    UrlPath(txid): UrlPath<String>,
    headers: HeaderMap,
    body: String,
) -> Response {
    if let Some(refused) = arrive(&shared, "PUT /cob").or_else(|| authorized(&shared, &headers)) {
        return refused;
    }
    if !txid_valid(&txid) {
        return cob_invalid("O campo txid não respeita o schema.");
    }
    let Ok(body) = serde_json::from_str::<Value>(&body) else {
        return cob_invalid("O corpo não é JSON.");
    };
    let expiracao = body["calendario"]["expiracao"].as_i64().unwrap_or(86_400);
    let original = body["valor"]["original"].as_str().unwrap_or("");
    let amount_ok = original.split_once('.').is_some_and(|(units, cents)| {
        !units.is_empty()
            && units.len() <= 10
            && cents.len() == 2
            && units
                .bytes()
                .chain(cents.bytes())
                .all(|b| b.is_ascii_digit())
    }) && original.bytes().any(|b| (b'1'..=b'9').contains(&b));
    if expiracao <= 0 {
        return cob_invalid("O campo cob.calendario.expiracao é igual ou menor que zero.");
    }
    if !amount_ok {
        return cob_invalid("O campo cob.valor.original não respeita o schema.");
    }
    if body["chave"] != KEY {
        return cob_invalid(
            "O campo cob.chave corresponde a uma conta que não pertence a este usuário recebedor.",
        );
    }
    if let Some(devedor) = body.get("devedor") {
        let cpf = devedor["cpf"].as_str().is_some_and(|cpf| cpf.len() == 11);
        let cnpj = devedor["cnpj"]
            .as_str()
            .is_some_and(|cnpj| cnpj.len() == 14);
        if !(cpf ^ cnpj) || !devedor["nome"].is_string() {
            return cob_invalid("O objeto cob.devedor não respeita o schema.");
        }
    }
    let mut inner = shared.inner.lock().unwrap();
    inner.cob_bodies.push(body.clone());
    if let Some(existing) = inner.charges.get(&txid) {
        if existing.cob["status"] != "ATIVA" {
            return cob_invalid(
                "A cobrança já existe, não está no status ATIVA, e a presente requisição busca alterá-la.",
            );
        }
        if existing.cob["valor"]["original"] == original {
            return axum::Json(existing.cob.clone()).into_response();
        }
    }
    let loc_id = inner.next_loc;
    inner.next_loc += 1;
    let location = format!("{}/qr/v2/{}", shared.host, uuid::Uuid::new_v4().simple());
    let payload = br_code(inner.style, inner.tamper, &txid, original, &location);
    let created = OffsetDateTime::now_utc();
    let mut cob = json!({
        "calendario": {"criacao": created.format(&Rfc3339).unwrap(), "expiracao": expiracao},
        "txid": txid,
        "revisao": 0,
        "loc": {"id": loc_id, "location": location, "tipoCob": "cob"},
        "location": location,
        "status": "ATIVA",
        "valor": {"original": original},
        "chave": KEY,
        "pixCopiaECola": payload,
    });
    if let Some(devedor) = body.get("devedor") {
        cob["devedor"] = devedor.clone();
    }
    if let Some(note) = body.get("solicitacaoPagador") {
        cob["solicitacaoPagador"] = note.clone();
    }
    inner.charges.insert(
        txid,
        Charge {
            cob: cob.clone(),
            created,
        },
    );
    (StatusCode::CREATED, axum::Json(cob)).into_response()
}

async fn get_cob(
    State(shared): State<Arc<Shared>>,
    UrlPath(txid): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = arrive(&shared, "GET /cob").or_else(|| authorized(&shared, &headers)) {
        return refused;
    }
    let inner = shared.inner.lock().unwrap();
    match inner.charges.get(&txid) {
        Some(charge) => axum::Json(charge.cob.clone()).into_response(),
        None => problem(
            StatusCode::NOT_FOUND,
            "CobNaoEncontrado",
            "Cobrança não encontrada.",
            "Cobrança não encontrada para o txid informado.",
        ),
    }
}

async fn put_webhook(
    State(shared): State<Arc<Shared>>,
    UrlPath(chave): UrlPath<String>,
    headers: HeaderMap,
    body: String,
) -> Response {
    if let Some(refused) = arrive(&shared, "PUT /webhook").or_else(|| authorized(&shared, &headers))
    {
        return refused;
    }
    if chave != KEY {
        return problem(
            StatusCode::BAD_REQUEST,
            "WebhookOperacaoInvalida",
            "Webhook inválido.",
            "A chave não pertence a este usuário recebedor.",
        );
    }
    let url = serde_json::from_str::<Value>(&body)
        .ok()
        .and_then(|body| body["webhookUrl"].as_str().map(str::to_owned));
    let Some(url) = url.filter(|url| url::Url::parse(url).is_ok()) else {
        return problem(
            StatusCode::BAD_REQUEST,
            "WebhookOperacaoInvalida",
            "Webhook inválido.",
            "O campo webhookUrl não respeita o schema.",
        );
    };
    shared.inner.lock().unwrap().webhooks.insert(chave, url);
    StatusCode::OK.into_response()
}

async fn get_webhook(
    State(shared): State<Arc<Shared>>,
    UrlPath(chave): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = arrive(&shared, "GET /webhook").or_else(|| authorized(&shared, &headers))
    {
        return refused;
    }
    let inner = shared.inner.lock().unwrap();
    match inner.webhooks.get(&chave) {
        Some(url) => axum::Json(json!({
            "webhookUrl": url,
            "chave": chave,
            "criacao": OffsetDateTime::now_utc().format(&Rfc3339).unwrap(),
        }))
        .into_response(),
        None => problem(
            StatusCode::NOT_FOUND,
            "WebhookNaoEncontrado",
            "Webhook não encontrado.",
            "Webhook não encontrado para a chave informada.",
        ),
    }
}
