//! Who gets a connection slot (issue 27 item 1): the open connections are shared fairly
//! between clients, so one address holding idle sockets cannot starve the others.
//! - Each client address holds at most its share; a connection past it is shed, unless it
//!   sends its request while a connection of its address has sent nothing: the oldest such
//!   one yields its place (agents behind one NAT share an address). Addresses
//!   of trusted proxies (`server.trusted_proxies`) carry many clients and have no share of
//!   their own: the per-client request budgets (`[hardening]`) tell their clients apart.
//! - When every slot is taken, a newcomer within its share evicts the connection that has
//!   sent least and is doing nothing (idle between requests, or its header still
//!   incomplete), taken from the client holding the most; only when every connection is busy
//!   answering is the newcomer shed.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use super::proxies::TrustedProxies;

/// One admitted connection as the table sees it; the connection's task updates the counters.
#[derive(Default)]
pub struct Slot {
    /// Bytes the client has sent on it.
    pub received: AtomicU64,
    /// Requests whose response head is not ready yet.
    pub in_flight: Arc<AtomicUsize>,
    /// Set (and `evict` notified) when a newcomer took this connection's place.
    evicted: AtomicBool,
    pub evict: Notify,
}

impl Slot {
    pub fn evicted(&self) -> bool {
        self.evicted.load(Ordering::Relaxed)
    }

    fn idle(&self) -> bool {
        self.in_flight.load(Ordering::Relaxed) == 0
    }
}

struct Entry {
    client: Option<IpAddr>,
    slot: Arc<Slot>,
}

#[derive(Default)]
struct Table {
    next: u64,
    open: HashMap<u64, Entry>,
    /// Live (not evicted) connections per client address.
    per_client: HashMap<IpAddr, usize>,
    /// Live connections in all.
    live: usize,
}

/// The shared table of open connections.
pub struct Admission {
    max_connections: usize,
    per_client: usize,
    trusted_proxies: TrustedProxies,
    table: Mutex<Table>,
}

/// A connection's place in the table, given back when the connection ends.
pub struct Admitted {
    admission: Arc<Admission>,
    id: u64,
    pub slot: Arc<Slot>,
}

impl Admitted {
    /// Who a request on this connection is from (see `proxies`).
    pub fn client(&self, peer: SocketAddr, headers: &http::HeaderMap) -> SocketAddr {
        self.admission.trusted_proxies.client(peer, headers)
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.admission.release(self.id);
    }
}

/// Why a connection was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shed {
    /// Its address already holds its share.
    OverShare,
    /// Every slot is busy answering.
    Full,
}

impl Admission {
    pub fn new(max_connections: usize, per_client: usize, trusted_proxies: TrustedProxies) -> Self {
        Self {
            max_connections,
            per_client: per_client.clamp(1, max_connections.max(1)),
            trusted_proxies,
            table: Mutex::new(Table::default()),
        }
    }

    /// Admits a connection from `peer`, evicting an idle one if every slot is taken.
    pub fn admit(self: &Arc<Self>, peer: IpAddr) -> Result<Admitted, Shed> {
        self.enter(peer, false)
    }

    /// Admits a connection from `peer` whose client has sent its first bytes: past its
    /// address's share, the oldest connection of that address that has sent nothing yields
    /// its place. Agents behind one NAT or proxy share an address, so an idle socket held
    /// there must not keep out a neighbour with a request (issue 39 item 5).
    pub fn admit_sending(self: &Arc<Self>, peer: IpAddr) -> Result<Admitted, Shed> {
        self.enter(peer, true)
    }

    fn enter(self: &Arc<Self>, peer: IpAddr, sending: bool) -> Result<Admitted, Shed> {
        let client = (!self.trusted_proxies.contains(peer)).then_some(peer);
        let mut table = self
            .table
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(client) = client
            && table.per_client.get(&client).copied().unwrap_or(0) >= self.per_client
        {
            let silent = sending
                .then(|| table.silent(client))
                .flatten()
                .ok_or(Shed::OverShare)?;
            table.evict(silent);
        }
        if table.live >= self.max_connections {
            let victim = table.victim().ok_or(Shed::Full)?;
            table.evict(victim);
        }
        let id = table.next;
        table.next += 1;
        let slot = Arc::new(Slot::default());
        table.open.insert(
            id,
            Entry {
                client,
                slot: Arc::clone(&slot),
            },
        );
        table.live += 1;
        if let Some(client) = client {
            *table.per_client.entry(client).or_insert(0) += 1;
        }
        Ok(Admitted {
            admission: Arc::clone(self),
            id,
            slot,
        })
    }

    fn release(&self, id: u64) {
        let mut table = self
            .table
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(entry) = table.open.remove(&id)
            && !entry.slot.evicted()
        {
            table.forget_live(entry.client);
        }
    }
}

impl Table {
    /// The idle connection that has sent least, of the client holding the most connections
    /// (a trusted proxy's connections count as one client each: they are not one client's).
    fn victim(&self) -> Option<u64> {
        self.open
            .iter()
            .filter(|(_, entry)| !entry.slot.evicted() && entry.slot.idle())
            .min_by_key(|(id, entry)| {
                let held = entry
                    .client
                    .and_then(|client| self.per_client.get(&client).copied())
                    .unwrap_or(1);
                (
                    std::cmp::Reverse(held),
                    entry.slot.received.load(Ordering::Relaxed),
                    **id,
                )
            })
            .map(|(id, _)| *id)
    }

    /// The oldest live connection of `client` that has sent nothing and awaits nothing.
    fn silent(&self, client: IpAddr) -> Option<u64> {
        self.open
            .iter()
            .filter(|(_, entry)| {
                entry.client == Some(client)
                    && !entry.slot.evicted()
                    && entry.slot.idle()
                    && entry.slot.received.load(Ordering::Relaxed) == 0
            })
            .map(|(id, _)| *id)
            .min()
    }

    fn evict(&mut self, id: u64) {
        let Some(entry) = self.open.get(&id) else {
            return;
        };
        let client = entry.client;
        entry.slot.evicted.store(true, Ordering::Relaxed);
        // `notify_one` keeps the wake-up if the connection's task is not waiting yet.
        entry.slot.evict.notify_one();
        self.forget_live(client);
    }

    fn forget_live(&mut self, client: Option<IpAddr>) {
        self.live = self.live.saturating_sub(1);
        if let Some(client) = client
            && let Some(held) = self.per_client.get_mut(&client)
        {
            *held = held.saturating_sub(1);
            if *held == 0 {
                self.per_client.remove(&client);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    #[test]
    fn an_address_past_its_share_is_shed_and_others_still_get_in() {
        let admission = Arc::new(Admission::new(8, 2, TrustedProxies::default()));
        let held: Vec<_> = (0..2).map(|_| admission.admit(ip(2)).unwrap()).collect();
        assert_eq!(admission.admit(ip(2)).err(), Some(Shed::OverShare));
        let other = admission.admit(ip(1));
        assert!(other.is_ok());
        drop(held);
        assert!(admission.admit(ip(2)).is_ok());
    }

    #[test]
    fn past_its_share_a_sender_takes_the_place_of_its_addresss_oldest_silent_connection() {
        // Issue 39 item 5: a hog and a polite agent behind one address.
        let admission = Arc::new(Admission::new(8, 3, TrustedProxies::default()));
        let held: Vec<_> = (0..3).map(|_| admission.admit(ip(2)).unwrap()).collect();
        held[0].slot.received.store(300, Ordering::Relaxed);
        // A newcomer that has sent nothing itself takes no one's place.
        assert_eq!(admission.admit(ip(2)).err(), Some(Shed::OverShare));
        let sender = admission.admit_sending(ip(2)).unwrap();
        assert!(held[1].slot.evicted(), "the oldest that sent nothing");
        assert!(!held[0].slot.evicted() && !held[2].slot.evicted());
        // One that sent a request, or is answering one, keeps its place.
        held[2].slot.in_flight.store(1, Ordering::Relaxed);
        sender.slot.received.store(80, Ordering::Relaxed);
        assert_eq!(admission.admit_sending(ip(2)).err(), Some(Shed::OverShare));
        // Another address's silent connections are not this address's to take.
        let other = admission.admit(ip(3)).unwrap();
        assert!(!other.slot.evicted());
        drop((held, sender, other));
        let table = admission.table.lock().unwrap();
        assert_eq!((table.live, table.open.len()), (0, 0));
    }

    #[test]
    fn when_full_the_idle_connection_that_sent_least_of_the_biggest_holder_goes() {
        let admission = Arc::new(Admission::new(4, 3, TrustedProxies::default()));
        let big: Vec<_> = (0..3).map(|_| admission.admit(ip(2)).unwrap()).collect();
        let small = admission.admit(ip(3)).unwrap();
        big[0].slot.received.store(500, Ordering::Relaxed);
        big[1].slot.in_flight.store(1, Ordering::Relaxed);
        big[2].slot.received.store(10, Ordering::Relaxed);
        let newcomer = admission.admit(ip(1)).unwrap();
        assert!(big[2].slot.evicted(), "the idle one that sent least");
        assert!(!big[0].slot.evicted() && !big[1].slot.evicted());
        assert!(!small.slot.evicted());
        // The evicted connection's place is free at once, and its end frees nothing twice.
        drop(big);
        drop(small);
        drop(newcomer);
        let table = admission.table.lock().unwrap();
        assert_eq!((table.live, table.open.len()), (0, 0));
        assert!(table.per_client.is_empty());
    }

    #[test]
    fn when_every_connection_is_answering_the_newcomer_is_shed() {
        let admission = Arc::new(Admission::new(2, 2, TrustedProxies::default()));
        let busy: Vec<_> = (0..2).map(|_| admission.admit(ip(2)).unwrap()).collect();
        for admitted in &busy {
            admitted.slot.in_flight.store(1, Ordering::Relaxed);
        }
        assert_eq!(admission.admit(ip(1)).err(), Some(Shed::Full));
    }

    #[test]
    fn a_trusted_proxy_has_no_share_of_its_own() {
        let admission = Arc::new(Admission::new(
            8,
            1,
            TrustedProxies::new(vec![ip(9).to_string().parse().unwrap()]),
        ));
        let through_proxy: Vec<_> = (0..5).map(|_| admission.admit(ip(9)).unwrap()).collect();
        assert_eq!(through_proxy.len(), 5);
        let direct = admission.admit(ip(1)).unwrap();
        assert_eq!(admission.admit(ip(1)).err(), Some(Shed::OverShare));
        drop(direct);
    }
}
