#!/usr/bin/env bash
# Reproduces BENCHMARKS.md on this machine, in one run, loopback only:
#   - throughput and p50/p99 latency (oha, 64 connections) of search_catalog,
#     lookup_catalog (10 ids) and get_product with selections, next to two baselines built
#     here: a bare axum endpoint with a fixed JSON-RPC body (the ceiling) and an rmcp server
#     whose one tool returns a fixed struct (the SDK floor);
#   - resident memory idle and with 100,000 products loaded;
#   - time from process start to the first answered tools/call;
#   - the criterion benches of the brain (relaxation, money, cursors);
#   - upstream round trips and latency per tool call, both platforms (bench/round_trips.sh).
# Needs cargo and python3; installs oha with `cargo install oha --locked` (slow, once) into
# target/bench-tools. Knobs: DURATION (per load test, default 10s), CONNECTIONS (64),
# SKIP_CRITERION=1, OUT (default BENCHMARKS.md). Not run by CI.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-64}
OUT=${OUT:-$ROOT/BENCHMARKS.md}
TOOLS=$ROOT/target/bench-tools
WORK=$ROOT/target/bench
mkdir -p "$TOOLS" "$WORK"
export CARGO_TERM_COLOR=never

OHA=$(command -v oha || true)
if [ -z "$OHA" ]; then
    OHA=$TOOLS/bin/oha
    if [ ! -x "$OHA" ]; then
        echo "== cargo install oha --locked (once; takes a while)"
        cargo install oha --locked --root "$TOOLS" --quiet
    fi
fi

echo "== building the bridge and the baselines (release profile)"
cargo build --release --quiet
bench_exe() {
    cargo bench --no-run --bench "$1" --message-format=json 2>/dev/null \
        | python3 -c 'import sys, json
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == sys.argv[1]:
        print(m["executable"])' "$1" | tail -n 1
}
BRIDGE=$ROOT/target/release/bcp-bridge
AXUM=$(bench_exe baseline_axum)
RMCP=$(bench_exe baseline_rmcp)

PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start NAME CMD... : runs a server, waits for its port, sets PORT and PID
start() {
    local name=$1; shift
    PORT=$(free_port)
    "$@" "127.0.0.1:$PORT" >"$WORK/$name.out" 2>"$WORK/$name.err" &
    PID=$!
    PIDS+=("$PID")
    for _ in $(seq 1 200); do
        if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$PORT),0.05)" 2>/dev/null; then return; fi
        sleep 0.05
    done
    echo "$name did not start"; cat "$WORK/$name.err"; exit 1
}

META='"meta":{"ucp-agent":{"profile":"https://agent.example/profile.json"}}'
call() { printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":{%s,"catalog":%s}}}' "$1" "$META" "$2"; }
SEARCH=$(call search_catalog '{"query":"running shoes","filters":{"price":{"min":0,"max":100000}}}')
LOOKUP=$(call lookup_catalog '{"ids":["prod_abc123","var_xyz789","prod_def456","prod_abc123_blu_10","prod_abc123_red_12","prod_moka_pot_default","prod_electric_kettle_default","prod_red_tshirt","item_123","item_456"]}')
PRODUCT=$(call get_product '{"id":"prod_abc123","selected":[{"name":"Color","label":"Blue"},{"name":"Size","label":"10"}],"preferences":["Color","Size"]}')
FIXED='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fixed","arguments":{}}}'

# load LABEL URL BODY -> appends "label rps p50_ms p99_ms" to $WORK/load.txt
load() {
    local label=$1 url=$2 body=$3
    # Every answer must be a 200 JSON-RPC result, or the numbers mean nothing.
    local reply
    reply=$(curl -s -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' -d "$body" "$url")
    grep -q '"result"' <<<"$reply" || { echo "$label: not a result: $reply"; exit 1; }
    echo "== oha $label ($DURATION, $CONNECTIONS connections)"
    "$OHA" --no-tui -z "$DURATION" -c "$CONNECTIONS" -m POST \
        -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
        -d "$body" --output-format json "$url" >"$WORK/oha-$label.json"
    python3 - "$label" "$WORK/oha-$label.json" >>"$WORK/load.txt" <<'PY'
import json, sys
label, path = sys.argv[1], sys.argv[2]
d = json.load(open(path))
summary, pct = d["summary"], d["latencyPercentiles"]
codes = d.get("statusCodeDistribution", {})
bad = sum(v for k, v in codes.items() if k != "200")
print(label, round(summary["requestsPerSec"]), round(pct["p50"] * 1000, 3),
      round(pct["p99"] * 1000, 3), bad, round(summary.get("successRate", 1.0), 4))
PY
}

: >"$WORK/load.txt"
start axum "$AXUM" --serve
load ceiling_axum "http://127.0.0.1:$PORT/mcp" '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fixed","arguments":{}}}'
kill "$PID"; wait "$PID" 2>/dev/null || true
start rmcp "$RMCP" --serve
load floor_rmcp "http://127.0.0.1:$PORT/mcp" "$FIXED"
kill "$PID"; wait "$PID" 2>/dev/null || true
start bridge "$BRIDGE" demo --listen
URL="http://127.0.0.1:$PORT/bcp/mcp"
# The search answer itself, for the SDK floor at the same payload size.
curl -s -H 'content-type: application/json' -d "$SEARCH" "$URL" \
    | python3 -c 'import json,sys; json.dump(json.load(sys.stdin)["result"]["structuredContent"], sys.stdout)' \
    >"$WORK/search-payload.json"
sleep 1
IDLE_KB=$(awk '/VmRSS/ {print $2}' "/proc/$PID/status")
load search_catalog "$URL" "$SEARCH"
load lookup_catalog_10 "$URL" "$LOOKUP"
load get_product_selected "$URL" "$PRODUCT"
LOADED_KB=$(awk '/VmHWM/ {print $2}' "/proc/$PID/status")
kill "$PID"; wait "$PID" 2>/dev/null || true
start rmcp_payload "$RMCP" --payload "$WORK/search-payload.json" --serve
load floor_rmcp_search_payload "http://127.0.0.1:$PORT/mcp" "$FIXED"
kill "$PID"; wait "$PID" 2>/dev/null || true

echo "== resident memory with 100,000 products"
python3 - "$WORK/store-100k.json" <<'PY'
import json, sys
products = []
for i in range(100_000):
    variants = [{"id": f"p{i}_v{j}", "sku": f"SKU-{i}-{j}", "options": [size],
                 "price": f"{10 + (i % 90)}.{j}0", "stock": (i + j) % 5}
                for j, size in enumerate(["S", "M", "L"])]
    products.append({"id": f"p{i}", "handle": f"product-{i}", "title": f"Product {i}",
                     "description": f"Generated product number {i} for the memory benchmark.",
                     "categories": {"merchant": f"Category {i % 50}"}, "tags": [f"t{i % 10}"],
                     "media": [{"url": f"https://cdn.example/p/{i}.jpg", "alt": f"Product {i}"}],
                     "options": [{"name": "Size", "values": ["S", "M", "L"]}],
                     "variants": variants})
json.dump({"name": "Bench", "currency": "BRL", "storefront_url": "https://bench.example/",
           "products": products}, open(sys.argv[1], "w"))
PY
printf '[store]\nplatform = "sample"\ndata = "%s"\n' "$WORK/store-100k.json" >"$WORK/bench-100k.toml"
start bridge100k "$BRIDGE" serve --config "$WORK/bench-100k.toml" --listen
sleep 1
curl -s -H 'content-type: application/json' -d "$(call search_catalog '{"query":"Product 99999"}')" \
    "http://127.0.0.1:$PORT/bcp/mcp" | grep -q '"p99999"' || { echo "100k store not serving"; exit 1; }
FULL_KB=$(awk '/VmRSS/ {print $2}' "/proc/$PID/status")
kill "$PID"; wait "$PID" 2>/dev/null || true
rm -f "$WORK/store-100k.json"

echo "== start to first answered call (median of 7)"
STARTUP_MS=$(python3 - "$BRIDGE" "$SEARCH" <<'PY'
import socket, subprocess, sys, time, urllib.request, statistics
bridge, body = sys.argv[1], sys.argv[2].encode()
runs = []
for _ in range(7):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    t0 = time.perf_counter()
    p = subprocess.Popen([bridge, "demo", "--listen", f"127.0.0.1:{port}"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                req = urllib.request.Request(f"http://127.0.0.1:{port}/bcp/mcp", data=body,
                                             headers={"content-type": "application/json"})
                if b'"result"' in urllib.request.urlopen(req, timeout=1).read():
                    break
            except OSError:
                time.sleep(0.002)
            if time.perf_counter() - t0 > 10:
                raise SystemExit("no answer in 10 s")
        runs.append((time.perf_counter() - t0) * 1000)
    finally:
        p.kill(); p.wait()
print(round(statistics.median(runs), 1))
PY
)

if [ "${SKIP_CRITERION:-0}" != 1 ]; then
    echo "== criterion (brain)"
    cargo bench --bench brain -- --warm-up-time 1 --measurement-time 3 --noplot 2>&1 \
        | tee "$WORK/criterion.txt" | grep -E '^[a-z].*|time:' || true
fi

echo "== upstream requests per tool call against the Shopify and WooCommerce stand-ins"
cargo test --release --quiet --test suite upstream_counts -- --ignored --nocapture 2>/dev/null \
    | tee "$WORK/upstream.log" | grep '^UPSTREAM' >"$WORK/upstream.txt"

BENCH_ROOT=$ROOT python3 - "$WORK" "$OUT" "$IDLE_KB" "$LOADED_KB" "$FULL_KB" "$STARTUP_MS" "$DURATION" "$CONNECTIONS" <<'PY'
import os, platform, re, subprocess, sys, datetime
work, out, idle_kb, loaded_kb, full_kb, startup_ms, duration, conns = sys.argv[1:]
rows = {}
for line in open(f"{work}/load.txt"):
    label, rps, p50, p99, bad, ok = line.split()
    rows[label] = dict(rps=int(rps), p50=float(p50), p99=float(p99), bad=int(bad))
ceiling, floor = rows["ceiling_axum"]["rps"], rows["floor_rmcp"]["rps"]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
cores = os.cpu_count()
rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
def mark(ok): return "met" if ok else "**missed**"
L = []
L.append("# Benchmarks\n")
L.append(f"Written by `bench/run.sh` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC. "
         f"Machine: {cpu}, {cores} cores, {platform.system()} {platform.release()}; {rustc}. "
         f"Load: oha, {conns} connections, {duration} per row, loopback, client and server on the same cores. "
         "Re-run `bench/run.sh` to reproduce; absolute numbers move with the machine, the ratios much less.\n")
L.append("## Throughput and latency\n")
L.append("| what | req/s | p50 ms | p99 ms | vs SDK floor | vs ceiling | non-200 |")
L.append("|---|---:|---:|---:|---:|---:|---:|")
names = {"ceiling_axum": "ceiling: bare axum, fixed JSON-RPC body",
         "floor_rmcp": "SDK floor: rmcp, one tool with a fixed struct",
         "search_catalog": "bridge `search_catalog` (query + price filter)",
         "lookup_catalog_10": "bridge `lookup_catalog`, 10 ids",
         "get_product_selected": "bridge `get_product`, 2 selections + preferences",
         "floor_rmcp_search_payload": "SDK floor answering the `search_catalog` answer as a fixed value"}
for key in ["ceiling_axum", "floor_rmcp", "floor_rmcp_search_payload", "search_catalog", "lookup_catalog_10", "get_product_selected"]:
    r = rows[key]
    L.append(f"| {names[key]} | {r['rps']} | {r['p50']:.2f} | {r['p99']:.2f} | "
             f"{r['rps']/floor:.2f} | {r['rps']/ceiling:.2f} | {r['bad']} |")
L.append("")
L.append("The bridge rows run on the embedded sample store: every product is in memory, so they "
         "measure the cached path (protocol work, no upstream round trip).\n")
L.append("## Targets\n")
L.append("| target | measured | |")
L.append("|---|---|---|")
for key in ["search_catalog", "lookup_catalog_10", "get_product_selected"]:
    r = rows[key]
    L.append(f"| `{key}` ≥ 80% of the SDK floor's throughput | {100*r['rps']/floor:.0f}% | {mark(r['rps'] >= 0.8*floor)} |")
    L.append(f"| `{key}` p99 < 5 ms at {conns} connections | {r['p99']:.2f} ms | {mark(r['p99'] < 5)} |")
same = rows["floor_rmcp_search_payload"]["rps"]
L.append(f"| `search_catalog` vs the SDK floor at the same payload | {100*rows['search_catalog']['rps']/same:.0f}% | {mark(rows['search_catalog']['rps'] >= 0.8*same)} |")
L.append(f"| idle RSS < 30 MB | {int(idle_kb)/1024:.1f} MB | {mark(int(idle_kb) < 30*1024)} |")
L.append(f"| start to first answered call < 200 ms | {startup_ms} ms | {mark(float(startup_ms) < 200)} |")
L.append("")
L.append("## Memory and start-up\n")
L.append("| what | value |")
L.append("|---|---:|")
L.append(f"| RSS idle (sample store, 40 products), 1 s after start | {int(idle_kb)/1024:.1f} MB |")
L.append(f"| peak RSS during the load tests above | {int(loaded_kb)/1024:.1f} MB |")
L.append(f"| RSS with 100,000 products (300,000 variants) loaded in the store | {int(full_kb)/1024:.1f} MB |")
L.append(f"| process start to first answered `tools/call` (median of 7) | {startup_ms} ms |")
L.append("")
crit = f"{work}/criterion.txt"
if os.path.exists(crit):
    L.append("## Brain (criterion, `cargo bench --bench brain`)\n")
    L.append("| bench | time (low / estimate / high) |")
    L.append("|---|---|")
    name = None
    for line in open(crit):
        m = re.match(r"^(\S.*?)\s+time:\s+\[(.*)\]", line)
        if m:
            L.append(f"| {m.group(1).strip()} | {m.group(2)} |"); continue
        m2 = re.match(r"^\s+time:\s+\[(.*)\]", line)
        if m2 and name:
            L.append(f"| {name} | {m2.group(1)} |"); name = None; continue
        if line.strip() and not line.startswith(" ") and "time:" not in line and not line.startswith(("Benchmarking", "Found", "Warning", "Gnuplot", "change:", "Performance", "No change")):
            name = line.strip()
    L.append("")
up = [line.split() for line in open(f"{work}/upstream.txt") if line.startswith("UPSTREAM")]
if up:
    L.append("## Upstream requests per tool call\n")
    L.append("Counted by the stand-ins of the adapter tests (`tests/suite/upstream_counts.rs`), product cache off. "
             "The sample store answers from memory: 0 upstream requests.\n")
    L.append("| platform | call | upstream requests |")
    L.append("|---|---|---:|")
    for _, platform_name, call, count in up:
        L.append(f"| {platform_name} | {call.replace('_', ' ')} | {count} |")
    L.append("")
# Hand-written analysis, kept with the script.
notes = os.path.join(os.environ["BENCH_ROOT"], "bench", "notes.md")
if os.path.exists(notes):
    L.append(open(notes).read())
# bench/load.sh writes its own section; keep it across runs of this script.
if os.path.exists(out):
    kept = re.search(r"<!-- LOAD:BEGIN.*?<!-- LOAD:END -->\n", open(out).read(), flags=re.S)
    if kept:
        L.append(kept.group(0))
open(out, "w").write("\n".join(L) + "\n")
print(f"wrote {out}")
PY

# ---- Round trips before/after and latency per tool (issue 10): a step and a section of its
# own (bench/round_trips.sh, between the ROUNDTRIPS markers), from the run above.
bash "$ROOT/bench/round_trips.sh" "$OUT" "$WORK/upstream.log"
