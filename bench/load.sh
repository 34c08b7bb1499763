#!/usr/bin/env bash
# Load run of issue 5: 200 concurrent agents against the embedded sample store for 60 s,
# loopback only, bounded in time. Four oha clients run side by side (50 connections each):
# search_catalog, lookup_catalog (10 ids), get_product with selections, and update_cart +
# get_cart on one cart (carts are not created under load: the sample store keeps at most
# 100,000 live carts by design). Every non-200 answer and every JSON-RPC error is counted.
# Writes the section between the LOAD markers of BENCHMARKS.md. Knobs: DURATION (60s),
# CONNECTIONS_EACH (50), OHA (path to oha; bench/run.sh installs it into target/bench-tools).
# Not run by CI.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DURATION=${DURATION:-60s}
EACH=${CONNECTIONS_EACH:-50}
WORK=$ROOT/target/bench/load
OUT=${OUT:-$ROOT/BENCHMARKS.md}
mkdir -p "$WORK"
OHA=${OHA:-$(command -v oha || echo "$ROOT/target/bench-tools/bin/oha")}
[ -x "$OHA" ] || { echo "oha not found: run bench/run.sh once (it installs oha) or set OHA"; exit 1; }

cargo build --release --quiet
BIN=$ROOT/target/release/bcp-bridge
"$BIN" demo --listen 127.0.0.1:0 >"$WORK/bridge.out" 2>"$WORK/bridge.err" &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do grep -q '^MCP endpoint' "$WORK/bridge.out" 2>/dev/null && break; sleep 0.1; done
URL=$(sed -nE 's/^MCP endpoint: (.*)$/\1/p' "$WORK/bridge.out" | head -n 1)

META='"meta":{"ucp-agent":{"profile":"https://agent.example/profile.json"}}'
catalog() { printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":{%s,"catalog":%s}}}' "$1" "$META" "$2"; }
CART=$(curl -s -H 'content-type: application/json' \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"create_cart\",\"arguments\":{$META,\"cart\":{\"line_items\":[{\"item\":{\"id\":\"item_123\"},\"quantity\":1}]}}}}" "$URL" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["structuredContent"]["id"])')
BODIES=(
    "search $(catalog search_catalog '{"query":"shoes","filters":{"price":{"max":100000}}}')"
    "lookup $(catalog lookup_catalog '{"ids":["prod_abc123","var_xyz789","prod_def456","prod_abc123_blu_10","prod_abc123_red_12","prod_moka_pot_default","prod_electric_kettle_default","prod_red_tshirt","item_123","item_456"]}')"
    "product $(catalog get_product '{"id":"prod_abc123","selected":[{"name":"Color","label":"Red"},{"name":"Size","label":"15"}],"preferences":["Color","Size"]}')"
    "cart {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"update_cart\",\"arguments\":{$META,\"id\":\"$CART\",\"cart\":{\"line_items\":[{\"item\":{\"id\":\"item_123\"},\"quantity\":2},{\"item\":{\"id\":\"item_456\"},\"quantity\":1}]}}}}"
)
echo "== $DURATION, $((EACH * ${#BODIES[@]})) connections against $URL"
LOADERS=()
for entry in "${BODIES[@]}"; do
    name=${entry%% *}; body=${entry#* }
    "$OHA" --no-tui -z "$DURATION" -c "$EACH" -m POST -H 'content-type: application/json' \
        -d "$body" --output-format json "$URL" >"$WORK/$name.json" &
    LOADERS+=($!)
done
wait "${LOADERS[@]}"
sleep 1
# A 200 may still carry a JSON-RPC error: sample each body once more after the run.
for entry in "${BODIES[@]}"; do
    name=${entry%% *}; body=${entry#* }
    curl -s -H 'content-type: application/json' -d "$body" "$URL" >"$WORK/$name.reply"
done
RSS_KB=$(awk '/VmHWM/ {print $2}' "/proc/$PID/status")
ALIVE=$(curl -s -o /dev/null -w '%{http_code}' "${URL%/bcp/mcp}/healthz")

python3 - "$WORK" "$DURATION" "$EACH" "$RSS_KB" "$ALIVE" "$OUT" <<'PY'
import json, sys, os, re
work, duration, each, rss_kb, alive, out = sys.argv[1:]
rows, total, bad = [], 0, 0
for name in ["search", "lookup", "product", "cart"]:
    d = json.load(open(os.path.join(work, name + ".json")))
    s, p = d["summary"], d["latencyPercentiles"]
    codes = d.get("statusCodeDistribution", {})
    n = sum(codes.values())
    non200 = {k: v for k, v in codes.items() if k != "200"}
    # oha cuts the requests still in flight when its own deadline hits (one per connection):
    # the client's doing, not a failure of the bridge, so they are counted apart.
    distribution = d.get("errorDistribution", {})
    cut = distribution.get("aborted due to deadline", 0)
    errors = sum(distribution.values()) - cut
    reply = json.load(open(os.path.join(work, name + ".reply")))
    total += n; bad += sum(non200.values()) + errors
    rows.append(f"| {name} | {n} | {round(s['requestsPerSec'])} | {p['p50']*1000:.2f} | {p['p99']*1000:.2f} | "
                f"{json.dumps(non200) if non200 else 0} | {errors} | {cut} | {'result' if 'result' in reply else 'ERROR'} |")
section = f"""<!-- LOAD:BEGIN (bench/load.sh) -->
## Load: 200 concurrent agents for 60 s (issue 5)

`bench/load.sh`: {int(each)*4} connections ({each} per tool) for {duration} against `demo`, loopback,
client and server on the same 2 cores; inbound limits off (the default), so any 429 would be
unintended. All connections use one agent profile (oha sends one body per run).

| tool | requests | req/s | p50 ms | p99 ms | non-200 | transport errors | cut by oha's deadline | reply after the run |
|---|---:|---:|---:|---:|---:|---:|---:|---|
""" + "\n".join(rows) + f"""

Total {total} requests, {bad} failed. Peak RSS {int(rss_kb)/1024:.1f} MB. `/healthz` after the run: {alive}.
<!-- LOAD:END -->
"""
text = open(out).read() if os.path.exists(out) else "# Benchmarks\n"
if "<!-- LOAD:BEGIN" in text:
    text = re.sub(r"<!-- LOAD:BEGIN.*?<!-- LOAD:END -->\n", section, text, flags=re.S)
else:
    text = text.rstrip("\n") + "\n\n" + section
open(out, "w").write(text)
print(section)
PY
