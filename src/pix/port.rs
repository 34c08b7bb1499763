//! What the brain needs from a PSP to take a Pix payment, independent of how the PSP is
//! reached: create a dynamic charge (`PUT /cob/{txid}`) and read it back (`GET /cob/{txid}`).
//! A notification from the PSP is only a signal to read the charge back: settlement is decided
//! on what the PSP answers here, never on a webhook body.

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::model::fiscal::TaxpayerId;
use crate::money::Money;

/// A charge to create. `txid` is derived from the store's order (26–35 characters of
/// `[a-zA-Z0-9]`), so a repeated complete asks for the same charge.
#[derive(Debug, Clone)]
pub struct ChargeRequest {
    pub txid: String,
    /// The store's total for the order, in BRL.
    pub amount: Money,
    /// `calendario.expiracao`, in seconds from creation.
    pub expires_secs: u32,
    /// `devedor`: the buyer's document and name, when the buyer gave a document.
    pub debtor: Option<Debtor>,
    /// `solicitacaoPagador`: a short text the payer's bank app shows (the store's name and
    /// order number; never buyer data).
    pub note: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Debtor {
    pub document: TaxpayerId,
    /// Personal data: never logged.
    pub name: String,
}

/// `status` of a charge as API Pix names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChargeStatus {
    /// `ATIVA`: open, waiting to be paid.
    Active,
    /// `CONCLUIDA`: paid.
    Completed,
    /// `REMOVIDA_PELO_USUARIO_RECEBEDOR`.
    RemovedByReceiver,
    /// `REMOVIDA_PELO_PSP` (e.g. expired and swept).
    RemovedByPsp,
}

/// One payment received for a charge (`pix[]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// `endToEndId`: applied at most once, across replicas and restarts.
    pub end_to_end_id: String,
    pub amount: Money,
    pub at: OffsetDateTime,
}

/// A charge as the PSP holds it.
#[derive(Debug, Clone)]
pub struct Charge {
    pub txid: String,
    pub status: ChargeStatus,
    /// `valor.original`.
    pub amount: Money,
    /// `chave`: the merchant's Pix key the charge pays into.
    pub key: String,
    /// `pixCopiaECola`: the BR Code payload the buyer pastes or scans.
    pub copia_e_cola: String,
    /// `location`: the payload's URL, when the PSP gives one.
    pub location: Option<String>,
    pub created_at: OffsetDateTime,
    /// `calendario.criacao` + `calendario.expiracao`.
    pub expires_at: OffsetDateTime,
    pub received: Vec<Received>,
}

#[derive(Debug, thiserror::Error)]
pub enum PixError {
    /// The PSP could not be reached or answered 5xx/429 (timeouts included): nothing is known
    /// about the charge. Maps to `processor_unavailable`.
    #[error("the PSP is unavailable: {0}")]
    Unavailable(String),
    /// The PSP refused the request (4xx with its `title`/`detail`, credentials included).
    #[error("the PSP refused the request: {0}")]
    Refused(String),
    /// `GET /cob/{txid}` for a charge the PSP does not hold.
    #[error("the PSP holds no charge {0}")]
    NotFound(String),
    /// The PSP answered something API Pix does not define.
    #[error("the PSP answered out of contract: {0}")]
    Malformed(String),
}

#[async_trait]
pub trait PixProvider: Send + Sync + 'static {
    /// `PUT /cob/{txid}`. Idempotent on `txid` from the bridge's side: a charge that already
    /// exists with that txid is read back (`GET /cob/{txid}`) and returned, never created twice.
    async fn create_charge(&self, request: &ChargeRequest) -> Result<Charge, PixError>;

    /// `GET /cob/{txid}`.
    async fn read_charge(&self, txid: &str) -> Result<Charge, PixError>;

    /// The merchant's Pix key (`[pix] key`) charges must pay into.
    fn key(&self) -> &str;
}
