#!/usr/bin/env bash
# Store load (issue 39 item 4): what agents cost a real WooCommerce behind the bridge, and how long
# they wait, beside the same requests sent straight to its Store API. Three parts, one run:
#   - stampede: N agents (STAMPEDE, default "50 200") ask the same search / the same product at
#     once on a cold bridge: store requests, agent p50/p99 against one lone call, store CPU;
#   - a day in miniature: DAY_SESSIONS (200) agent sessions over DAY_SECONDS (300): Zipf-popular
#     queries and products with a long tail, carts and checkouts (real orders), a product price
#     change with its signed webhook every WEBHOOK_EVERY (3) seconds; store requests per catalog
#     call, store CPU seconds, agent p50/p99, every catalog answer's prices checked for freshness
#     against the store's price history;
#   - one agent's journey (search → product → cart → checkout → address → option → complete)
#     through the bridge beside a minimal direct Store API client (the floor), JOURNEYS (5) each.
# The store is an instance of the bench's own (`.ci/real-woo.sh up` with its own root, port and
# database, Brazilian Market off), stood up on the first run and reused after: the bench changes
# prices and places orders, which the real-store tests sharing the default instance must not see.
# Knobs: STORE_ROOT (/tmp/bcp-bench-woo), STORE_PORT (18461), STORE_DB (bcp_bench_woo),
# BCP_REAL_WOO_SHARED (where setup.sh and the tarballs are; real-woo.sh's default otherwise),
# STAMPEDE, DAY_SECONDS, DAY_SESSIONS, WEBHOOK_EVERY, JOURNEYS, OUT (BENCHMARKS.md), BRIDGE (an
# executable to measure; otherwise `cargo build --release`). Needs python3 (standard library),
# curl, and what .ci/real-woo.sh needs (PHP 8.2, MariaDB). Writes its own section of BENCHMARKS.md
# (between the STORELOAD markers) and leaves the rest as it is; bench/run.sh runs it unless
# SKIP_STORE_LOAD=1. Honours CARGO_TARGET_DIR. Not run by CI.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/BENCHMARKS.md}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
WORK=$TARGET/bench/store_load
STORE_ROOT=${STORE_ROOT:-/tmp/bcp-bench-woo}
STORE_PORT=${STORE_PORT:-18461}
STORE_DB=${STORE_DB:-bcp_bench_woo}
mkdir -p "$WORK"
export CARGO_TERM_COLOR=never

if [ -z "${BRIDGE:-}" ]; then
    echo "== building the bridge (release)"
    cargo build --release --quiet --bin bcp-bridge
    BRIDGE=$TARGET/release/bcp-bridge
fi
[ -x "$BRIDGE" ] || { echo "missing executable: $BRIDGE"; exit 1; }

echo "== the bench's store ($STORE_ROOT, port $STORE_PORT)"
BCP_REAL_WOO_ROOT=$STORE_ROOT BCP_REAL_WOO_PORT=$STORE_PORT BCP_REAL_WOO_DB=$STORE_DB BCP_REAL_WOO_BRAZIL=off \
    bash "$ROOT/.ci/real-woo.sh" up
# shellcheck disable=SC1091
. "$STORE_ROOT/env.sh"
[ -n "${BCP_REAL_WOO_URL:-}" ] || { echo "no store: ${BCP_REAL_WOO_SKIP:-see $STORE_ROOT}"; exit 1; }

# The machine's other work shows in every latency: say so in the section when it was busy.
LOADED_NOTE=""
if python3 -c 'import os, sys; sys.exit(0 if os.getloadavg()[0] > 0.5 * os.cpu_count() else 1)'; then
    LOADED_NOTE="; a loaded machine: other work ran beside the bench, so compare figures within this run only"
fi
export LOADED_NOTE

python3 "$ROOT/bench/store_load.py" "$BRIDGE" "$BCP_REAL_WOO_URL" "$STORE_ROOT" "$OUT" "$WORK" \
    "$ROOT/bench/store_load.php"
