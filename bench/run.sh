#!/usr/bin/env bash
# Reproduces BENCHMARKS.md on this machine, in one run, loopback only:
#   - the cached path under load (bench/throughput.sh): search_catalog, lookup_catalog
#     (10 ids), get_product and get_cart next to "fixed bytes" axum, "lean double-encoding"
#     axum and the rmcp floor at the same payload, pinned, with server CPU µs per call; and
#     the sample store's cart bound;
#   - resident memory with 100,000 products loaded;
#   - time from process start to the first answered tools/call;
#   - the criterion benches of the brain (relaxation, money, cursors);
#   - upstream round trips and latency per tool call, both platforms (bench/round_trips.sh);
#   - 200 concurrent agent sessions over the 7 catalog and cart tools for LOAD_DURATION
#     (bench/load.sh, default 60 s; SKIP_LOAD=1 keeps the last LOAD section);
#   - agents in front of a real WooCommerce (bench/store_load.sh: stampede, a day in miniature,
#     one journey beside the direct floor; SKIP_STORE_LOAD=1 keeps the last STORELOAD section);
#   - only when SOAK_MINUTES is set: the soak run (bench/soak.sh, mixed traffic with cache
#     churn and webhooks for that many minutes; 30 is the reference run).
# Needs cargo, python3 and curl (taskset for pinning); the load part also redis-server.
# Knobs: DURATION (seconds per load row, default 5), CONNECTIONS (8), SKIP_CRITERION=1,
# SKIP_UPSTREAM=1, LOAD_DURATION (60s), SKIP_LOAD=1, SKIP_STORE_LOAD=1 (and store_load.sh's own:
# DAY_SECONDS, STAMPEDE, …), SOAK_MINUTES (unset: no soak), OUT (default BENCHMARKS.md). Honours
# CARGO_TARGET_DIR. Not run by CI.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/BENCHMARKS.md}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
WORK=$TARGET/bench
mkdir -p "$WORK"
export CARGO_TERM_COLOR=never

WORK=$WORK bench/throughput.sh

BRIDGE=$TARGET/dist/bcp-bridge
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
# Negotiation off: the bench agent's profile URL is not fetchable.
printf '[store]\nplatform = "sample"\ndata = "%s"\n\n[negotiation]\nenabled = false\n' "$WORK/store-100k.json" >"$WORK/bench-100k.toml"
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

: >"$WORK/upstream.txt"
if [ "${SKIP_UPSTREAM:-0}" != 1 ]; then
    echo "== upstream requests per tool call against the Shopify and WooCommerce stand-ins"
    cargo test --release --quiet --test suite upstream_counts -- --ignored --nocapture 2>/dev/null \
        | tee "$WORK/upstream.log" | grep '^UPSTREAM' >"$WORK/upstream.txt"
fi

BENCH_ROOT=$ROOT python3 - "$WORK" "$OUT" "$FULL_KB" "$STARTUP_MS" <<'PY'
import os, platform, re, subprocess, sys, datetime
work, out, full_kb, startup_ms = sys.argv[1:]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
cores = os.cpu_count()
rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
def mark(ok): return "met" if ok else "**missed**"
L = []
L.append("# Benchmarks\n")
L.append(f"Written by `bench/run.sh` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC. "
         f"Machine: {cpu}, {cores} cores, {platform.system()} {platform.release()}; {rustc}. "
         "Re-run `bench/run.sh` to reproduce; absolute numbers move with the machine, the ratios much less.\n")
# bench/throughput.sh: the cached path under load, its baselines and targets, the cart bound.
L.append(open(f"{work}/throughput.md").read())
L.append("## Memory and start-up\n")
L.append("| what | value |")
L.append("|---|---:|")
L.append(f"| RSS with 100,000 products (300,000 variants) loaded in the store | {int(full_kb)/1024:.1f} MB |")
L.append(f"| process start to first answered `tools/call` (median of 7) | {startup_ms} ms |")
L.append(f"| start to first answered call < 200 ms | {mark(float(startup_ms) < 200)} |")
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
    # bench/round_trips.sh's section, kept when this run skips it (SKIP_UPSTREAM=1).
    kept = re.search(r"<!-- ROUNDTRIPS:BEGIN.*?<!-- ROUNDTRIPS:END -->\n", open(out).read(), flags=re.S)
    if kept and os.environ.get("SKIP_UPSTREAM") == "1":
        L.append(kept.group(0))
    # bench/store_load.sh's section: written after this, by its own step (or kept: SKIP_STORE_LOAD=1).
    kept = re.search(r"<!-- STORELOAD:BEGIN.*?<!-- STORELOAD:END -->\n", open(out).read(), flags=re.S)
    if kept:
        L.append(kept.group(0))
    # bench/soak.sh's section: long, so only re-run when asked (SOAK_MINUTES).
    kept = re.search(r"<!-- SOAK:BEGIN.*?<!-- SOAK:END -->\n", open(out).read(), flags=re.S)
    if kept:
        L.append(kept.group(0))
open(out, "w").write("\n".join(L) + "\n")
print(f"wrote {out}")
PY

# ---- Round trips before/after and latency per tool (issue 10): a step and a section of its
# own (bench/round_trips.sh, between the ROUNDTRIPS markers), from the run above.
if [ "${SKIP_UPSTREAM:-0}" != 1 ]; then
    bash "$ROOT/bench/round_trips.sh" "$OUT" "$WORK/upstream.log"
fi

# ---- Load (issues 5 and 25): 200 concurrent agent sessions, its own section (LOAD markers).
if [ "${SKIP_LOAD:-0}" != 1 ]; then
    DURATION=${LOAD_DURATION:-60s} OUT=$OUT bash "$ROOT/bench/load.sh"
fi

# ---- Store load (issue 39): a real WooCommerce behind the bridge, its own section (STORELOAD markers).
if [ "${SKIP_STORE_LOAD:-0}" != 1 ]; then
    # The shipped build measured above, not a second (release) build.
    BRIDGE=$BRIDGE OUT=$OUT bash "$ROOT/bench/store_load.sh"
fi

# ---- Soak (issue 27): minutes long, so only when asked: SOAK_MINUTES=30 bench/run.sh.
if [ -n "${SOAK_MINUTES:-}" ]; then
    SOAK_MINUTES=$SOAK_MINUTES OUT=$OUT bash "$ROOT/bench/soak.sh"
fi
