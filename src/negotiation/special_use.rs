//! Special-use addresses a profile fetch must never reach (UCP 2026-08-25 "Fetching" item 7,
//! DISC-011): the IANA special-purpose registries that RFC 6890 set up, IPv4 and IPv6, plus the
//! IPv6 forms that carry an IPv4 address inside.
//!
//! The embedded-IPv4 forms (IPv4-compatible, IPv4-mapped, IPv4-translated, NAT64 well-known and
//! local-use, 6to4, Teredo) are refused whole rather than decoded: the kernel or a translator on
//! the path turns them into an IPv4 destination this check never sees, every form embeds the
//! address differently (Teredo even obfuscates it), and a public IPv4 profile host is reached
//! through its own A record anyway. The cost: on a DNS64 network an IPv4-only profile host gets
//! a synthesized 64:ff9b:: answer and is refused; list such hosts in `allow_private_hosts`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// One refused block of the address space.
pub(super) struct Block<A> {
    pub(super) net: A,
    pub(super) len: u8,
    pub(super) name: &'static str,
}

const fn v4(a: u8, b: u8, c: u8, d: u8, len: u8, name: &'static str) -> Block<Ipv4Addr> {
    Block {
        net: Ipv4Addr::new(a, b, c, d),
        len,
        name,
    }
}

const fn v6(segments: [u16; 8], len: u8, name: &'static str) -> Block<Ipv6Addr> {
    let [a, b, c, d, e, f, g, h] = segments;
    Block {
        net: Ipv6Addr::new(a, b, c, d, e, f, g, h),
        len,
        name,
    }
}

/// First match names the address, so narrower blocks come before the blocks that hold them.
pub(super) const V4: &[Block<Ipv4Addr>] = &[
    v4(0, 0, 0, 0, 8, "this network, 0.0.0.0/8 (RFC 791)"),
    v4(10, 0, 0, 0, 8, "private-use, 10.0.0.0/8 (RFC 1918)"),
    v4(
        100,
        64,
        0,
        0,
        10,
        "shared address space, 100.64.0.0/10 (RFC 6598)",
    ),
    v4(127, 0, 0, 0, 8, "loopback, 127.0.0.0/8 (RFC 1122)"),
    v4(
        169,
        254,
        0,
        0,
        16,
        "link-local and cloud metadata, 169.254.0.0/16 (RFC 3927)",
    ),
    v4(172, 16, 0, 0, 12, "private-use, 172.16.0.0/12 (RFC 1918)"),
    v4(
        192,
        0,
        0,
        8,
        32,
        "IPv4 dummy address, 192.0.0.8/32 (RFC 7600)",
    ),
    v4(
        192,
        0,
        0,
        0,
        24,
        "IETF protocol assignments, 192.0.0.0/24 (RFC 6890)",
    ),
    v4(
        192,
        0,
        2,
        0,
        24,
        "documentation TEST-NET-1, 192.0.2.0/24 (RFC 5737)",
    ),
    // The next three are anycast sinks and relays the registry lists as globally reachable;
    // no agent profile is hosted on them, so refusing costs nothing.
    v4(192, 31, 196, 0, 24, "AS112-v4, 192.31.196.0/24 (RFC 7535)"),
    v4(192, 52, 193, 0, 24, "AMT, 192.52.193.0/24 (RFC 7450)"),
    v4(
        192,
        88,
        99,
        0,
        24,
        "6to4 relay anycast, 192.88.99.0/24 (RFC 7526)",
    ),
    v4(192, 168, 0, 0, 16, "private-use, 192.168.0.0/16 (RFC 1918)"),
    v4(
        192,
        175,
        48,
        0,
        24,
        "AS112 direct delegation, 192.175.48.0/24 (RFC 7534)",
    ),
    v4(198, 18, 0, 0, 15, "benchmarking, 198.18.0.0/15 (RFC 2544)"),
    v4(
        198,
        51,
        100,
        0,
        24,
        "documentation TEST-NET-2, 198.51.100.0/24 (RFC 5737)",
    ),
    v4(
        203,
        0,
        113,
        0,
        24,
        "documentation TEST-NET-3, 203.0.113.0/24 (RFC 5737)",
    ),
    v4(224, 0, 0, 0, 4, "multicast, 224.0.0.0/4 (RFC 5771)"),
    v4(
        255,
        255,
        255,
        255,
        32,
        "limited broadcast, 255.255.255.255/32 (RFC 919)",
    ),
    v4(240, 0, 0, 0, 4, "reserved, 240.0.0.0/4 (RFC 1112)"),
];

pub(super) const V6: &[Block<Ipv6Addr>] = &[
    v6(
        [0, 0, 0, 0, 0, 0, 0, 0],
        128,
        "unspecified, ::/128 (RFC 4291)",
    ),
    v6(
        [0, 0, 0, 0, 0, 0, 0, 1],
        128,
        "loopback, ::1/128 (RFC 4291)",
    ),
    v6([0; 8], 96, "IPv4-compatible, ::/96 (RFC 4291), embeds IPv4"),
    v6(
        [0, 0, 0, 0, 0, 0xffff, 0, 0],
        96,
        "IPv4-mapped, ::ffff:0:0/96 (RFC 4291), embeds IPv4",
    ),
    v6(
        [0, 0, 0, 0, 0xffff, 0, 0, 0],
        96,
        "IPv4-translated, ::ffff:0:0:0/96 (RFC 2765), embeds IPv4",
    ),
    v6(
        [0x64, 0xff9b, 0, 0, 0, 0, 0, 0],
        96,
        "NAT64 well-known, 64:ff9b::/96 (RFC 6052), embeds IPv4",
    ),
    v6(
        [0x64, 0xff9b, 1, 0, 0, 0, 0, 0],
        48,
        "NAT64 local-use, 64:ff9b:1::/48 (RFC 8215), embeds IPv4",
    ),
    v6(
        [0x100, 0, 0, 0, 0, 0, 0, 0],
        64,
        "discard-only, 100::/64 (RFC 6666)",
    ),
    v6(
        [0x2001, 0, 0, 0, 0, 0, 0, 0],
        32,
        "Teredo, 2001::/32 (RFC 4380), embeds IPv4",
    ),
    v6(
        [0x2001, 2, 0, 0, 0, 0, 0, 0],
        48,
        "benchmarking, 2001:2::/48 (RFC 5180)",
    ),
    v6(
        [0x2001, 0, 0, 0, 0, 0, 0, 0],
        23,
        "IETF protocol assignments, 2001::/23 (RFC 2928)",
    ),
    v6(
        [0x2001, 0xdb8, 0, 0, 0, 0, 0, 0],
        32,
        "documentation, 2001:db8::/32 (RFC 3849)",
    ),
    v6(
        [0x2002, 0, 0, 0, 0, 0, 0, 0],
        16,
        "6to4, 2002::/16 (RFC 3056), embeds IPv4",
    ),
    v6(
        [0x2620, 0x4f, 0x8000, 0, 0, 0, 0, 0],
        48,
        "AS112-v6, 2620:4f:8000::/48 (RFC 7534)",
    ),
    v6(
        [0x3fff, 0, 0, 0, 0, 0, 0, 0],
        20,
        "documentation, 3fff::/20 (RFC 9637)",
    ),
    v6(
        [0xfc00, 0, 0, 0, 0, 0, 0, 0],
        7,
        "unique-local, fc00::/7 (RFC 4193)",
    ),
    v6(
        [0xfe80, 0, 0, 0, 0, 0, 0, 0],
        10,
        "link-local, fe80::/10 (RFC 4291)",
    ),
    v6(
        [0xfec0, 0, 0, 0, 0, 0, 0, 0],
        10,
        "site-local, fec0::/10 (RFC 3879)",
    ),
    v6(
        [0xff00, 0, 0, 0, 0, 0, 0, 0],
        8,
        "multicast, ff00::/8 (RFC 4291)",
    ),
];

/// IANA hands out global unicast only from 2000::/3; anything else that is not named above
/// (SRv6 SIDs 5f00::/16, space reserved by the IETF) is not an internet host either.
const GLOBAL_UNICAST: Block<Ipv6Addr> = v6([0x2000, 0, 0, 0, 0, 0, 0, 0], 3, "");
pub(super) const OUTSIDE_GLOBAL_UNICAST: &str = "outside global unicast 2000::/3 (RFC 4291)";

fn within_v4(ip: Ipv4Addr, block: &Block<Ipv4Addr>) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(block.len)).unwrap_or(0);
    u32::from(ip) & mask == u32::from(block.net) & mask
}

fn within_v6(ip: Ipv6Addr, block: &Block<Ipv6Addr>) -> bool {
    let mask = u128::MAX
        .checked_shl(128 - u32::from(block.len))
        .unwrap_or(0);
    u128::from(ip) & mask == u128::from(block.net) & mask
}

/// The special-use block `ip` falls in, if any.
pub(super) fn special_use(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => V4
            .iter()
            .find(|block| within_v4(v4, block))
            .map(|block| block.name),
        IpAddr::V6(v6) => V6
            .iter()
            .find(|block| within_v6(v6, block))
            .map(|block| block.name)
            .or_else(|| (!within_v6(v6, &GLOBAL_UNICAST)).then_some(OUTSIDE_GLOBAL_UNICAST)),
    }
}

#[cfg(test)]
pub(super) mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    // DISC-011: every special-use block, with an address inside and, where the neighbour is
    // ordinary address space, the addresses just outside. `true` = refused.
    pub(in crate::negotiation) const TABLE: &[(&str, bool)] = &[
        // 0.0.0.0/8
        ("0.0.0.0", true),
        ("0.255.255.255", true),
        ("1.0.0.0", false),
        // 10.0.0.0/8
        ("9.255.255.255", false),
        ("10.0.0.0", true),
        ("10.255.255.255", true),
        ("11.0.0.0", false),
        // 100.64.0.0/10
        ("100.63.255.255", false),
        ("100.64.0.0", true),
        ("100.127.255.255", true),
        ("100.128.0.0", false),
        // 127.0.0.0/8
        ("126.255.255.255", false),
        ("127.0.0.1", true),
        ("127.255.255.255", true),
        ("128.0.0.0", false),
        // 169.254.0.0/16
        ("169.253.255.255", false),
        ("169.254.0.0", true),
        ("169.254.169.254", true),
        ("169.255.0.0", false),
        // 172.16.0.0/12
        ("172.15.255.255", false),
        ("172.16.0.0", true),
        ("172.31.255.255", true),
        ("172.32.0.0", false),
        // 192.0.0.0/24 and 192.0.0.8
        ("191.255.255.255", false),
        ("192.0.0.0", true),
        ("192.0.0.8", true),
        ("192.0.0.170", true),
        ("192.0.0.255", true),
        ("192.0.1.0", false),
        // 192.0.2.0/24
        ("192.0.1.255", false),
        ("192.0.2.1", true),
        ("192.0.2.255", true),
        ("192.0.3.0", false),
        // 192.31.196.0/24
        ("192.31.195.255", false),
        ("192.31.196.1", true),
        ("192.31.197.0", false),
        // 192.52.193.0/24
        ("192.52.192.255", false),
        ("192.52.193.1", true),
        ("192.52.194.0", false),
        // 192.88.99.0/24
        ("192.88.98.255", false),
        ("192.88.99.1", true),
        ("192.88.100.0", false),
        // 192.168.0.0/16
        ("192.167.255.255", false),
        ("192.168.0.0", true),
        ("192.168.255.255", true),
        ("192.169.0.0", false),
        // 192.175.48.0/24
        ("192.175.47.255", false),
        ("192.175.48.1", true),
        ("192.175.49.0", false),
        // 198.18.0.0/15
        ("198.17.255.255", false),
        ("198.18.0.1", true),
        ("198.19.255.255", true),
        ("198.20.0.0", false),
        // 198.51.100.0/24
        ("198.51.99.255", false),
        ("198.51.100.1", true),
        ("198.51.101.0", false),
        // 203.0.113.0/24
        ("203.0.112.255", false),
        ("203.0.113.1", true),
        ("203.0.114.0", false),
        // 224.0.0.0/4
        ("223.255.255.255", false),
        ("224.0.0.1", true),
        ("239.255.255.255", true),
        // 240.0.0.0/4 and 255.255.255.255
        ("240.0.0.1", true),
        ("254.255.255.255", true),
        ("255.255.255.254", true),
        ("255.255.255.255", true),
        // ordinary IPv4
        ("8.8.8.8", false),
        ("1.1.1.1", false),
        ("100.128.0.1", false),
        // ::/128, ::1/128, IPv4-compatible ::/96
        ("::", true),
        ("::1", true),
        ("::2", true),
        ("::127.0.0.1", true),
        ("::8.8.8.8", true),
        ("::255.255.255.255", true),
        // IPv4-mapped ::ffff:0:0/96, public IPv4 inside included
        ("::ffff:127.0.0.1", true),
        ("::ffff:10.0.0.1", true),
        ("::ffff:8.8.8.8", true),
        // IPv4-translated ::ffff:0:0:0/96
        ("::ffff:0:7f00:1", true),
        ("::ffff:0:808:808", true),
        // NAT64 64:ff9b::/96 and 64:ff9b:1::/48
        ("64:ff9b::7f00:1", true),
        ("64:ff9b::a00:1", true),
        ("64:ff9b::808:808", true),
        ("64:ff9b:1::7f00:1", true),
        ("64:ff9b:1:ffff:ffff:ffff:ffff:ffff", true),
        // discard-only 100::/64
        ("100::1", true),
        ("100::ffff:ffff:ffff:ffff", true),
        // 2001::/23, Teredo 2001::/32, benchmarking 2001:2::/48
        ("2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false),
        ("2001::1", true),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", true),
        ("2001:2::1", true),
        ("2001:10::1", true),
        ("2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", true),
        ("2001:200::", false),
        // documentation 2001:db8::/32
        ("2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", false),
        ("2001:db8::1", true),
        ("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", true),
        ("2001:db9::", false),
        // 6to4 2002::/16
        ("2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false),
        ("2002:7f00:1::", true),
        ("2002:808:808::1", true),
        ("2003::", false),
        // AS112-v6 2620:4f:8000::/48
        ("2620:4f:7fff:ffff:ffff:ffff:ffff:ffff", false),
        ("2620:4f:8000::1", true),
        ("2620:4f:8001::", false),
        // documentation 3fff::/20
        ("3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false),
        ("3fff::1", true),
        ("3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", true),
        ("3fff:1000::", false),
        // unique-local fc00::/7, link-local fe80::/10, site-local fec0::/10, multicast ff00::/8
        ("fc00::1", true),
        ("fd00::1", true),
        ("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true),
        ("fe80::1", true),
        ("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true),
        ("fec0::1", true),
        ("feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true),
        ("ff02::1", true),
        ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true),
        // outside 2000::/3: the neighbours of the blocks above that lie there
        ("::1:0:0", true),
        ("64:ff9b:2::", true),
        ("100:0:0:1::", true),
        ("5f00::1", true),
        ("4000::1", true),
        ("fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true),
        // ordinary IPv6
        ("2001:4860:4860::8888", false),
        ("2606:4700:4700::1111", false),
        ("2a00:1450:4001::1", false),
        ("3ffe::1", false),
    ];

    #[test]
    fn every_listed_address_is_classified() {
        for (address, refused) in TABLE {
            let ip: IpAddr = address.parse().unwrap();
            assert_eq!(
                special_use(ip).is_some(),
                *refused,
                "{address}: {:?}",
                special_use(ip)
            );
        }
    }

    #[test]
    fn every_block_has_a_row_and_its_ends_are_refused() {
        let named = |name: &str| {
            TABLE.iter().any(|(address, refused)| {
                *refused && special_use(address.parse().unwrap()) == Some(name)
            })
        };
        for block in V4 {
            assert!(named(block.name), "no row lands in {}", block.name);
            let first = u32::from(block.net);
            let last = first | u32::MAX.checked_shr(u32::from(block.len)).unwrap_or(0);
            for end in [first, last] {
                assert!(special_use(Ipv4Addr::from(end).into()).is_some(), "{end}");
            }
        }
        for block in V6 {
            assert!(named(block.name), "no row lands in {}", block.name);
            let first = u128::from(block.net);
            let last = first | u128::MAX.checked_shr(u32::from(block.len)).unwrap_or(0);
            for end in [first, last] {
                assert!(special_use(Ipv6Addr::from(end).into()).is_some(), "{end}");
            }
        }
        assert!(named(OUTSIDE_GLOBAL_UNICAST));
    }

    #[test]
    fn the_ranges_named_in_issue_17_are_refused() {
        // The addresses a real connect() reached before this table existed.
        for address in [
            "::127.0.0.1",
            "::ffff:0:7f00:1",
            "64:ff9b:1::7f00:1",
            "2002:7f00:1::",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "198.18.0.1",
            "192.0.0.8",
            "240.0.0.1",
            "192.0.2.1",
            "203.0.113.1",
            "2001:db8::1",
            "fec0::1",
            "100::1",
        ] {
            assert!(special_use(address.parse().unwrap()).is_some(), "{address}");
        }
    }
}
