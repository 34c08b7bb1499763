//! Each client's share of the idempotency records (issue 35 item 2): the bytes of the records
//! each [`Holder`] (an address, a verified agent) holds, each until the record expires. A
//! client one of whose holders is past its share is refused new keys, told to come back when
//! that holder's own oldest record expires, whatever others hold.
//!
//! The book is kept by the process beside whichever store holds the records: it only counts,
//! so a charge may end a moment before its record does (the record's clock starts later),
//! and nothing here ever removes a record. With Redis each replica keeps its own book.
//!
//! Charges sit in an expiry index across clients as well as in their client's own, so each
//! operation drops a few of the oldest expired ones and a client that never comes back leaves
//! nothing behind; a client's own expired charges go when it is charged again.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::access::client_address;

/// Whose records they are, for the per-client shares: the caller's address, and the agent
/// whose request signature verified when there is one. A record is charged to both, and a
/// claim is refused when either is past its share: anyone can publish profiles and sign as
/// each, so a verified agent alone would let one address take a share per profile, and an
/// agent spread over many addresses still has one share. Agent profiles a request merely
/// asserts are no client at all: anyone may write any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Client {
    address: Option<IpAddr>,
    agent: Option<[u8; 16]>,
}

/// One share: what a [`Client`] is charged to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Holder {
    /// An IPv4 address, or an IPv6 /64 (one host's usual allotment, so a host cannot take
    /// a share per address it can pick).
    Address(IpAddr),
    /// A digest of the profile URL whose key verified the request's signature.
    Agent([u8; 16]),
    /// No address known and nothing signed (a call inside the process): one share for all.
    Unknown,
}

impl Client {
    /// A client whose address is not known and who signed nothing.
    pub const UNKNOWN: Self = Self {
        address: None,
        agent: None,
    };

    /// The client of a call from `peer`, signed by `agent` when its signature verified.
    pub fn new(agent: Option<[u8; 16]>, peer: Option<IpAddr>) -> Self {
        Self {
            address: peer.map(client_address),
            agent,
        }
    }

    /// The shares this client's records are charged to.
    pub fn holders(self) -> impl Iterator<Item = Holder> {
        let address = self.address.map(Holder::Address);
        let agent = self.agent.map(Holder::Agent);
        let unknown = (address.is_none() && agent.is_none()).then_some(Holder::Unknown);
        [address, agent, unknown].into_iter().flatten()
    }
}

/// Expired charges of other clients dropped per operation: more than one, so they go faster
/// than they come.
const EXPIRED_PER_OPERATION: usize = 8;

/// One record's charge (a running claim's room, then its answer's weight), to settle or cancel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Charge {
    client: Client,
    /// (expiry, number): the number keeps equal instants apart.
    stamp: (Instant, u64),
}

#[derive(Default)]
struct Account {
    bytes: usize,
    charges: BTreeMap<(Instant, u64), usize>,
}

#[derive(Default)]
struct Book {
    accounts: HashMap<Holder, Account>,
    by_expiry: BTreeMap<(Instant, u64), Client>,
    numbered: u64,
}

impl Book {
    fn remove(&mut self, client: Client, stamp: (Instant, u64)) {
        self.by_expiry.remove(&stamp);
        for holder in client.holders() {
            if let Some(account) = self.accounts.get_mut(&holder) {
                if let Some(bytes) = account.charges.remove(&stamp) {
                    account.bytes -= bytes;
                }
                if account.charges.is_empty() {
                    self.accounts.remove(&holder);
                }
            }
        }
    }

    fn add(&mut self, client: Client, bytes: usize, expires: Instant) -> Charge {
        self.numbered += 1;
        let stamp = (expires, self.numbered);
        for holder in client.holders() {
            let account = self.accounts.entry(holder).or_default();
            account.bytes += bytes;
            account.charges.insert(stamp, bytes);
        }
        self.by_expiry.insert(stamp, client);
        Charge { client, stamp }
    }

    fn drop_expired(&mut self, now: Instant) {
        for _ in 0..EXPIRED_PER_OPERATION {
            match self.by_expiry.first_key_value() {
                Some((stamp, client)) if stamp.0 <= now => {
                    let (stamp, client) = (*stamp, *client);
                    self.remove(client, stamp);
                }
                _ => break,
            }
        }
    }

    /// Drops all of `holder`'s expired charges, so its share counts only what it still holds.
    fn drop_expired_of(&mut self, holder: Holder, now: Instant) {
        loop {
            let oldest = self
                .accounts
                .get(&holder)
                .and_then(|account| account.charges.first_key_value())
                .map(|(stamp, _)| *stamp);
            match oldest {
                Some(stamp) if stamp.0 <= now => {
                    // The charge's other holder (address or agent) is in the index's entry.
                    match self.by_expiry.get(&stamp).copied() {
                        Some(client) => self.remove(client, stamp),
                        None => {
                            if let Some(account) = self.accounts.get_mut(&holder)
                                && let Some(bytes) = account.charges.remove(&stamp)
                            {
                                account.bytes -= bytes;
                            }
                        }
                    }
                }
                _ => break,
            }
        }
    }
}

/// The per-client shares: `limit` bytes each.
pub struct Quotas {
    limit: usize,
    book: Mutex<Book>,
}

impl Quotas {
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            book: Mutex::new(Book::default()),
        }
    }

    /// The book, even after a panic elsewhere: it only counts, and a count is never unsafe.
    fn book(&self) -> MutexGuard<'_, Book> {
        let mut book = self.book.lock().unwrap_or_else(PoisonError::into_inner);
        book.drop_expired(Instant::now());
        book
    }

    /// Charges `bytes` to each of `client`'s holders until `expires`; when one is past its
    /// share, how long until that holder's own oldest record expires.
    pub fn charge(
        &self,
        client: Client,
        bytes: usize,
        expires: Instant,
    ) -> Result<Charge, Duration> {
        let now = Instant::now();
        let mut book = self.book();
        let mut wait = None;
        for holder in client.holders() {
            book.drop_expired_of(holder, now);
            if let Some(account) = book.accounts.get(&holder)
                && account.bytes.saturating_add(bytes) > self.limit
            {
                let oldest = account
                    .charges
                    .first_key_value()
                    .map(|((expiry, _), _)| expiry.saturating_duration_since(now))
                    .unwrap_or_default();
                wait = wait.max(Some(oldest));
            }
        }
        match wait {
            Some(wait) => Err(wait),
            None => Ok(book.add(client, bytes, expires)),
        }
    }

    /// The claim's answer is recorded: its client now holds `bytes` until `expires` (more than
    /// the claim's room when the answer is larger: it is charged in full).
    pub fn settle(&self, charge: Charge, bytes: usize, expires: Instant) {
        let mut book = self.book();
        book.remove(charge.client, charge.stamp);
        book.add(charge.client, bytes, expires);
    }

    /// The claim recorded nothing: its room is the client's again.
    pub fn cancel(&self, charge: Charge) {
        self.book().remove(charge.client, charge.stamp);
    }

    /// The bytes `holder` holds, expired charges not yet dropped included.
    pub fn held(&self, holder: Holder) -> usize {
        self.book()
            .accounts
            .get(&holder)
            .map_or(0, |account| account.bytes)
    }

    /// Holders holding anything.
    pub fn holders(&self) -> usize {
        self.book().accounts.len()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::net::{IpAddr, Ipv4Addr};

    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(203, 0, 113, last))
    }

    fn address(last: u8) -> Client {
        Client::new(None, Some(ip(last)))
    }

    fn held_by(quotas: &Quotas, last: u8) -> usize {
        quotas.held(Holder::Address(ip(last)))
    }

    #[test]
    fn a_client_past_its_share_is_refused_until_its_own_oldest_record_expires() {
        // Issue 35 item 2: one client's records never take another's share.
        let quotas = Quotas::new(1_000);
        let now = Instant::now();
        let (flooder, buyer) = (address(1), address(2));
        let soon = now + Duration::from_secs(60);
        let later = now + Duration::from_secs(86_400);
        quotas.charge(flooder, 400, soon).unwrap();
        quotas.charge(flooder, 400, later).unwrap();
        let refused = quotas.charge(flooder, 400, later).unwrap_err();
        assert!(
            refused <= Duration::from_secs(60) && refused > Duration::from_secs(50),
            "retry_after from the flooder's own oldest record: {refused:?}"
        );
        // The buyer has its whole share.
        quotas.charge(buyer, 1_000, later).unwrap();
        assert_eq!(held_by(&quotas, 2), 1_000);
        assert_eq!(held_by(&quotas, 1), 800);
    }

    #[test]
    fn settling_charges_the_answer_and_cancelling_gives_the_room_back() {
        let quotas = Quotas::new(1_000);
        let client = address(1);
        let expires = Instant::now() + Duration::from_secs(30);
        let charge = quotas.charge(client, 600, expires).unwrap();
        assert!(quotas.charge(client, 600, expires).is_err());
        quotas.settle(charge, 100, Instant::now() + Duration::from_secs(86_400));
        assert_eq!(held_by(&quotas, 1), 100);
        let second = quotas.charge(client, 600, expires).unwrap();
        assert_eq!(held_by(&quotas, 1), 700);
        quotas.cancel(second);
        assert_eq!(held_by(&quotas, 1), 100);
        // An answer larger than the room is charged in full.
        let third = quotas.charge(client, 600, expires).unwrap();
        quotas.settle(third, 2_000, expires);
        assert_eq!(held_by(&quotas, 1), 2_100);
        assert!(quotas.charge(client, 1, expires).is_err());
    }

    #[test]
    fn expired_charges_free_their_client_and_leave_no_account_behind() {
        let quotas = Quotas::new(1_000);
        let past = Instant::now();
        for n in 0..20 {
            quotas.charge(address(n), 1_000, past).unwrap();
        }
        // Each operation drops a few other clients' expired charges; the charged client's
        // own go at once.
        quotas
            .charge(address(0), 1_000, past + Duration::from_secs(60))
            .unwrap();
        assert_eq!(held_by(&quotas, 0), 1_000);
        for _ in 0..4 {
            held_by(&quotas, 0);
        }
        assert_eq!(quotas.holders(), 1, "expired holders are forgotten");
    }

    #[test]
    fn an_agent_signing_from_one_address_shares_that_address_and_its_own_share() {
        // Profiles are free to publish: signing as many agents from one address gains nothing,
        // and one agent calling from many addresses has one share.
        let quotas = Quotas::new(1_000);
        let later = Instant::now() + Duration::from_secs(86_400);
        quotas
            .charge(Client::new(Some([1; 16]), Some(ip(1))), 600, later)
            .unwrap();
        let second_profile = quotas.charge(Client::new(Some([2; 16]), Some(ip(1))), 600, later);
        assert!(second_profile.is_err(), "the address is past its share");
        let elsewhere = quotas.charge(Client::new(Some([1; 16]), Some(ip(9))), 600, later);
        assert!(elsewhere.is_err(), "the agent is past its share");
        assert_eq!(held_by(&quotas, 9), 0, "a refused charge holds nothing");
        quotas
            .charge(Client::new(Some([2; 16]), Some(ip(9))), 600, later)
            .unwrap();
        assert_eq!(quotas.held(Holder::Agent([2; 16])), 600);
    }

    #[test]
    fn ipv6_clients_share_their_64_and_mapped_ipv4_is_ipv4() {
        let holder = |text: &str| {
            let client = Client::new(None, Some(text.parse().unwrap()));
            client.holders().collect::<Vec<_>>()
        };
        assert_eq!(
            holder("2001:db8:1:2:aaaa::1"),
            holder("2001:db8:1:2:bbbb::2")
        );
        assert_ne!(holder("2001:db8:1:2:aaaa::1"), holder("2001:db8:1:3::1"));
        assert_eq!(holder("::ffff:203.0.113.1"), vec![Holder::Address(ip(1))]);
        assert_eq!(
            Client::UNKNOWN.holders().collect::<Vec<_>>(),
            vec![Holder::Unknown]
        );
    }
}
