#!/usr/bin/env bash
# The cached path under load (issue 14), self-contained: bench/run.sh calls it, and it can
# run alone. Loopback only, server and load generator pinned to separate cores (taskset)
# when the machine has two or more. For each of search_catalog, lookup_catalog (10 ids),
# get_product and get_cart it measures, in this one run and at the bridge's own answer:
#   - the bridge (sample store, negotiation off);
#   - "fixed bytes" axum: the bridge's answer frame as fixed bytes (transport limit);
#   - "lean double-encoding" axum: request parsed to a Value, answer encoded twice;
#   - the rmcp floor: rmcp answering the same answer as a fixed value;
# with req/s, p50/p99, and server CPU µs per call (from /proc). Then the sample store's
# cart bound: create_cart until full, the answer when full, and the memory at the bound.
# Writes the markdown section to $WORK/throughput.md and the raw rows to $WORK/rows.txt.
# Needs cargo, python3, curl; taskset (util-linux) for pinning. Knobs: DURATION (seconds
# per row, 5), CONNECTIONS (8), CART_BOUND (20000), BRIDGE (a bridge binary to measure
# instead of building this checkout's). Not run by CI.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DURATION=${DURATION:-5}
DURATION=${DURATION%s}
CONNECTIONS=${CONNECTIONS:-8}
CART_BOUND=${CART_BOUND:-20000}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
WORK=${WORK:-$TARGET/bench}
mkdir -p "$WORK"
export CARGO_TERM_COLOR=never

echo "== building the bridge, the baselines and the load generator (release profile)"
# BRIDGE=path measures another build of the bridge (e.g. the one before a change).
[ -n "${BRIDGE:-}" ] || cargo build --release --quiet --bin bcp-bridge
bench_exe() {
    cargo bench --no-run --bench "$1" --message-format=json 2>/dev/null \
        | python3 -c 'import sys, json
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == sys.argv[1]:
        print(m["executable"])' "$1" | tail -n 1
}
BRIDGE=${BRIDGE:-$TARGET/release/bcp-bridge}
AXUM=$(bench_exe baseline_axum)
RMCP=$(bench_exe baseline_rmcp)
LOADGEN=$(bench_exe loadgen)
for exe in "$BRIDGE" "$AXUM" "$RMCP" "$LOADGEN"; do
    [ -x "$exe" ] || { echo "missing executable: $exe"; exit 1; }
done

# Pinning: the server on core 0, the load generator on core 1 (with two cores or more).
CORES=$(nproc)
if [ "$CORES" -ge 2 ] && command -v taskset >/dev/null; then
    ON_SERVER=(taskset -c 0)
    ON_LOAD=(taskset -c 1)
    PINNING="server pinned to core 0, load generator to core 1 (taskset)"
else
    ON_SERVER=()
    ON_LOAD=()
    PINNING="not pinned ($CORES core(s) or no taskset)"
fi

PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start NAME CMD... : runs a pinned server on a free port, waits for it, sets PORT and PID
start() {
    local name=$1; shift
    PORT=$(free_port)
    "${ON_SERVER[@]}" "$@" "127.0.0.1:$PORT" >"$WORK/$name.out" 2>"$WORK/$name.err" &
    PID=$!
    PIDS+=("$PID")
    for _ in $(seq 1 200); do
        if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$PORT),0.05)" 2>/dev/null; then return; fi
        sleep 0.05
    done
    echo "$name did not start"; cat "$WORK/$name.err"; exit 1
}
stop() { kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; }

rpc() { curl -s -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' -d "$2" "$1"; }

# load LABEL URL BODY -> appends "LABEL <json>" to rows.txt; every answer must be a result.
load() {
    local label=$1 url=$2 body=$3
    local reply
    reply=$(rpc "$url" "$body")
    grep -q '"result"' <<<"$reply" || { echo "$label: not a result: ${reply:0:300}"; exit 1; }
    echo "== $label (${DURATION}s, $CONNECTIONS connections)"
    local line
    line=$("${ON_LOAD[@]}" "$LOADGEN" --url "$url" --body "$body" -c "$CONNECTIONS" -z "$DURATION" --pid "$PID")
    echo "   $line"
    echo "$label $line" >>"$WORK/rows.txt"
}

# The bridge as a merchant would run it on the sample store, negotiation off (the bench
# agent's profile URL is not fetchable), default log level. Search pages are cached too, so
# search answers are kept like the other reads (only answers built wholly from cached
# entries are).
cat >"$WORK/bench-sample.toml" <<'TOML'
[store]
platform = "sample"

[negotiation]
enabled = false

[cache]
search = true
TOML

META='"meta":{"ucp-agent":{"profile":"https://agent.example/profile.json"}}'
call() { printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":{%s,%s}}}' "$1" "$META" "$2"; }
SEARCH=$(call search_catalog '"catalog":{"query":"shoes","filters":{"price":{"min":0,"max":100000}}}')
LOOKUP=$(call lookup_catalog '"catalog":{"ids":["prod_abc123","var_xyz789","prod_def456","prod_abc123_blu_10","prod_abc123_red_12","prod_moka_pot_default","prod_electric_kettle_default","prod_red_tshirt","item_123","item_456"]}')
PRODUCT=$(call get_product '"catalog":{"id":"prod_abc123","selected":[{"name":"Color","label":"Blue"},{"name":"Size","label":"10"}],"preferences":["Color","Size"]}')
CREATE=$(call create_cart '"cart":{"line_items":[{"item":{"id":"item_123"},"quantity":1},{"item":{"id":"item_456"},"quantity":2}]}')

: >"$WORK/rows.txt"
start bridge "$BRIDGE" serve --config "$WORK/bench-sample.toml" --listen
URL="http://127.0.0.1:$PORT/bcp/mcp"
CART=$(rpc "$URL" "$CREATE" | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["structuredContent"]["id"])')
CART_GET=$(call get_cart "\"id\":\"$CART\"")
sleep 1
IDLE_KB=$(awk '/VmRSS/ {print $2}' "/proc/$PID/status")
TOOLS=(search_catalog lookup_catalog_10 get_product get_cart)
declare -A BODIES=([search_catalog]="$SEARCH" [lookup_catalog_10]="$LOOKUP" [get_product]="$PRODUCT" [get_cart]="$CART_GET")
for tool in "${TOOLS[@]}"; do
    # The bridge's own answer, whole (fixed-bytes baseline) and its structuredContent (the
    # lean and rmcp baselines answer that same value).
    rpc "$URL" "${BODIES[$tool]}" >"$WORK/$tool.frame.json"
    python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))["result"]["structuredContent"], open(sys.argv[2],"w"), ensure_ascii=False, separators=(",",":"))' \
        "$WORK/$tool.frame.json" "$WORK/$tool.payload.json"
    load "bridge:$tool" "$URL" "${BODIES[$tool]}"
done
LOADED_KB=$(awk '/VmHWM/ {print $2}' "/proc/$PID/status")
stop

FIXED='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fixed","arguments":{}}}'
for tool in "${TOOLS[@]}"; do
    start fixed "$AXUM" --fixed "$WORK/$tool.frame.json" --serve
    load "fixed:$tool" "http://127.0.0.1:$PORT/mcp" "$FIXED"; stop
    start lean "$AXUM" --lean "$WORK/$tool.payload.json" --serve
    load "lean:$tool" "http://127.0.0.1:$PORT/mcp" "$FIXED"; stop
    start rmcp "$RMCP" --payload "$WORK/$tool.payload.json" --serve
    load "rmcp:$tool" "http://127.0.0.1:$PORT/mcp" "$FIXED"; stop
done

echo "== the sample store's cart bound ($CART_BOUND carts)"
printf '[store]\nplatform = "sample"\nmax_carts = %s\n\n[negotiation]\nenabled = false\n' "$CART_BOUND" >"$WORK/bench-carts.toml"
start carts "$BRIDGE" serve --config "$WORK/bench-carts.toml" --listen
URL="http://127.0.0.1:$PORT/bcp/mcp"
sleep 0.5
CARTS_IDLE_KB=$(awk '/VmRSS/ {print $2}' "/proc/$PID/status")
FILL_STARTED=$(date +%s.%N)
# Until the bound answers 503: more requests than the bound, so the store fills for sure.
"${ON_LOAD[@]}" "$LOADGEN" --url "$URL" --body "$CREATE" -c "$CONNECTIONS" \
    -z "$(python3 -c "print(max(3, $CART_BOUND / 2000))")" --pid "$PID" >"$WORK/carts-fill.json"
FILL_ENDED=$(date +%s.%N)
FULL_STATUS=$(curl -s -o "$WORK/carts-full.json" -w '%{http_code}' -H 'content-type: application/json' -d "$CREATE" "$URL")
CARTS_FULL_KB=$(awk '/VmHWM/ {print $2}' "/proc/$PID/status")
# Reads still work at the bound.
rpc "$URL" "$SEARCH" | grep -q '"result"' || { echo "search failed with a full cart store"; exit 1; }
stop

python3 - "$WORK" "$IDLE_KB" "$LOADED_KB" "$CARTS_IDLE_KB" "$CARTS_FULL_KB" "$FULL_STATUS" \
    "$CART_BOUND" "$FILL_STARTED" "$FILL_ENDED" "$DURATION" "$CONNECTIONS" "$PINNING" <<'PY'
import json, sys
(work, idle_kb, loaded_kb, carts_idle_kb, carts_full_kb, full_status, bound, t0, t1,
 duration, conns, pinning) = sys.argv[1:]
rows = {}
for line in open(f"{work}/rows.txt"):
    label, data = line.split(" ", 1)
    rows[label] = json.loads(data)
tools = ["search_catalog", "lookup_catalog_10", "get_product", "get_cart"]
names = {"search_catalog": "`search_catalog` (query + price filter)",
         "lookup_catalog_10": "`lookup_catalog`, 10 ids",
         "get_product": "`get_product`, 2 selections + preferences",
         "get_cart": "`get_cart`, 2 lines"}
L = []
L.append("<!-- THROUGHPUT:BEGIN (bench/throughput.sh) -->")
L.append("## The cached path under load\n")
L.append(f"`bench/throughput.sh`: {conns} keep-alive connections, {duration} s per row, loopback, {pinning}; "
         "load from `benches/loadgen.rs` (closed loop, one thread). Server CPU is utime+stime of the server "
         "process over the row, divided by the calls answered. Every baseline answers the bridge's own answer "
         "for that call, captured in the same run, so each group compares one payload size. "
         "The bridge runs the sample store with negotiation off, at the default log level.\n")
L.append("| call | server | answer bytes | req/s | p50 ms | p99 ms | server CPU µs/call | non-200 |")
L.append("|---|---|---:|---:|---:|---:|---:|---:|")
servers = [("fixed", '"fixed bytes" axum (the answer frame as fixed bytes)'),
           ("lean", '"lean double-encoding" axum (request → Value, answer encoded twice)'),
           ("rmcp", "rmcp floor (the same answer as a fixed value)"),
           ("bridge", "**bcp-bridge**")]
for tool in tools:
    for key, label in servers:
        r = rows[f"{key}:{tool}"]
        L.append(f"| {names[tool]} | {label} | {r['body_bytes']} | {r['rps']} | {r['p50_ms']:.2f} | "
                 f"{r['p99_ms']:.2f} | {r['server_cpu_us']} | {r['non_200'] + r['errors']} |")
L.append("")
L.append("### Targets (issue 14)\n")
L.append("| target | measured | |")
L.append("|---|---|---|")
def mark(ok): return "met" if ok else "**missed**"
for tool in tools:
    b, lean, rmcp = rows[f"bridge:{tool}"], rows[f"lean:{tool}"], rows[f"rmcp:{tool}"]
    ratio_lean, ratio_rmcp = b["rps"] / lean["rps"], b["rps"] / rmcp["rps"]
    L.append(f"| {names[tool]} ≥ 0.8× lean double-encoding (req/s) | {ratio_lean:.2f}× "
             f"(CPU {b['server_cpu_us']} vs {lean['server_cpu_us']} µs) | {mark(ratio_lean >= 0.8)} |")
    L.append(f"| {names[tool]} ≥ 2× the rmcp floor (req/s) | {ratio_rmcp:.2f}× | {mark(ratio_rmcp >= 2)} |")
    L.append(f"| {names[tool]} p99 < 2 ms at {conns} connections | {b['p99_ms']:.2f} ms | {mark(b['p99_ms'] < 2)} |")
idle_mb, loaded_mb = int(idle_kb) / 1024, int(loaded_kb) / 1024
L.append(f"| idle RSS < 20 MB | {idle_mb:.1f} MB | {mark(idle_mb < 20)} |")
L.append(f"| RSS under load < 40 MB (peak over the rows above) | {loaded_mb:.1f} MB | {mark(loaded_mb < 40)} |")
L.append("")
fill = json.load(open(f"{work}/carts-fill.json"))
full = open(f"{work}/carts-full.json").read()
try:
    error = json.loads(full)["error"]
    full_text = f"HTTP {full_status}, JSON-RPC {error['code']}: “{error['message']}”"
except Exception:
    full_text = f"HTTP {full_status}: {full[:200]}"
per_cart = (int(carts_full_kb) - int(carts_idle_kb)) / int(bound)
L.append("### The sample store's cart bound\n")
L.append(f"`create_cart` (2 lines) under the same load against a sample store with `max_carts = {bound}` "
         f"(default 100,000), carts kept 24 h.\n")
L.append("| what | value |")
L.append("|---|---:|")
L.append(f"| create_cart answered while filling (req/s) | {fill['rps']} |")
L.append(f"| calls answered with an error once full (of {fill['requests']}) | {fill['non_200']} |")
L.append(f"| answer when full | {full_text} |")
L.append(f"| RSS before / at the bound | {int(carts_idle_kb)/1024:.1f} MB / {int(carts_full_kb)/1024:.1f} MB |")
L.append(f"| memory per cart (≈) | {per_cart*1024:.0f} bytes |")
L.append(f"| projected RSS at the default bound (100,000 carts) | {(int(carts_idle_kb) + per_cart*100000)/1024:.0f} MB |")
L.append("")
L.append("<!-- THROUGHPUT:END -->")
open(f"{work}/throughput.md", "w").write("\n".join(L) + "\n")
print(f"wrote {work}/throughput.md")
PY
