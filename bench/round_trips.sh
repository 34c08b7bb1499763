#!/usr/bin/env bash
# Upstream round trips and latency per tool call (issue 10), both platforms, against the
# stand-ins with the product cache off: each call cold (a fresh bridge) and warm (the same
# call again), every upstream request delayed 150 ms by the stand-in. Writes its own section
# of BENCHMARKS.md (between the ROUNDTRIPS markers; the rest of the file is left as it is),
# next to the counts issue 10 measured before the work ("before") and the floors it set.
#   bash bench/round_trips.sh [OUT] [LOG]
# OUT defaults to BENCHMARKS.md; LOG is the output of an earlier run of the measuring test
# (bench/run.sh passes its own), otherwise the test is run here:
#   cargo test --release --test suite upstream_counts -- --ignored --nocapture
# PROFILE=debug runs it without a release build (faster to build, a few ms slower per call).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:-$ROOT/BENCHMARKS.md}
LOG=${2:-}
PROFILE=${PROFILE:-release}
if [ -z "$LOG" ]; then
    LOG=$(mktemp)
    trap 'rm -f "$LOG"' EXIT
    flag=()
    [ "$PROFILE" = release ] && flag=(--release)
    echo "== upstream round trips and latency per tool call ($PROFILE)"
    cargo test "${flag[@]}" --quiet --test suite upstream_counts -- --ignored --nocapture \
        2>/dev/null >"$LOG"
fi
python3 - "$LOG" "$OUT" "$PROFILE" <<'PY'
import datetime, os, re, sys
log, out, profile = sys.argv[1:]
rows = [line.split() for line in open(log) if line.startswith("ROUNDTRIP ")]
if not rows:
    sys.exit(f"no ROUNDTRIP lines in {log}")
# Issue 10's table: measured before the work (cache off, cold) and the floor it asked for.
before = {
    ("shopify", "get_product"): ("1", "1"),
    ("shopify", "get_product_300_variants"): ("2", "2"),
    ("shopify", "lookup_catalog_50_ids"): ("3", "2"),
    ("shopify", "create_cart_2_lines"): ("2", "1"),
    ("shopify", "update_cart_replace"): ("4", "2"),
    ("shopify", "cancel_cart"): ("3", "2"),
    ("woocommerce", "get_product_variable"): ("6", "2"),
    ("woocommerce", "get_product_variation_id"): ("7", "2 +1 round"),
    ("woocommerce", "get_product_sku"): ("—", "2 +1 round"),
    ("woocommerce", "lookup_catalog_50_ids"): ("6–7", "5–6 in 2 rounds"),
    ("woocommerce", "create_cart_3_lines"): ("9–10", "1 (2 cold)"),
    ("woocommerce", "update_cart_2_lines"): ("13", "1 (+1 read if needed)"),
    ("woocommerce", "cancel_cart"): ("2", "1"),
}
L = ["<!-- ROUNDTRIPS:BEGIN (bench/round_trips.sh) -->",
     "## Upstream round trips and latency per tool call (issue 10)\n",
     f"Written by `bench/round_trips.sh` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC "
     f"({profile} build). Counted by the Shopify and WooCommerce stand-ins "
     "(`tests/suite/upstream_counts.rs`), product cache off. **Cold**: a fresh bridge (no "
     "WooCommerce category tree or guest Nonce yet); **warm**: the same call again on it. Latency: "
     "every upstream request delayed 150 ms by the stand-in, so it shows the rounds a call waits "
     "for (requests of one round go out together). **Before** and **floor** are issue 10's "
     "figures (cold); the sample store answers from memory (0 requests).\n",
     "| platform | call | before | floor | cold | warm | cold ms | warm ms |",
     "|---|---|---:|---:|---:|---:|---:|---:|"]
for _, platform, call, cold, warm, cold_ms, warm_ms in rows:
    was, floor = before.get((platform, call), ("—", "—"))
    L.append(f"| {platform} | {call.replace('_', ' ')} | {was} | {floor} | {cold} | {warm} | {cold_ms} | {warm_ms} |")
L.append("")
L.append("Where a call costs more than one round it is because the store forces it: in a WooCommerce "
         "search or lookup, a variable product's variations come from a second listing once the "
         "product is known, and a variation id or SKU needs its parent first; a cold WooCommerce cart write first "
         "reads a cart for the guest Nonce; a Shopify cart line that is not a variant gid (a SKU, "
         "handle or product id) is looked up before the write; a cancel or replacement reads the "
         "Shopify cart to know its line ids. A Shopify line left out as sold out costs one "
         "`nodes` read of its title after the write, only then.")
L.append("<!-- ROUNDTRIPS:END -->\n")
section = "\n".join(L)
text = open(out).read() if os.path.exists(out) else ""
pattern = re.compile(r"<!-- ROUNDTRIPS:BEGIN.*?<!-- ROUNDTRIPS:END -->\n", flags=re.S)
text = pattern.sub(lambda _: section, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + section
open(out, "w").write(text)
print(f"wrote the round-trip section of {out}")
PY
