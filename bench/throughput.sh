#!/usr/bin/env bash
# Catalog reads and a cart read under load (issues 14 and 25), self-contained: bench/run.sh calls it, and it can
# run alone. Loopback only, server and load generator pinned to separate cores (taskset)
# when the machine has two or more. For each of search_catalog, lookup_catalog (10 ids),
# get_product and get_cart it measures, in this one run and at the bridge's own answer:
#   - the bridge (sample store, negotiation off), with its answer cache and without;
#   - "fixed bytes" axum: the bridge's answer frame as fixed bytes (transport limit);
#   - "lean double-encoding" axum: request parsed to a Value, answer encoded twice;
#   - the rmcp floor: rmcp answering the same answer as a fixed value;
# with req/s, p50/p99, and server CPU µs per call (from /proc). Then the sample store's
# cart bound: create_cart until full, the answer when full, and the memory at the bound.
# AXUM, RMCP, LOADGEN: built baselines and load generator to use instead of building them.
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

echo "== building the bridge, the baselines and the load generator (dist profile, as shipped)"
# BRIDGE=path measures another build of the bridge (e.g. the one before a change).
[ -n "${BRIDGE:-}" ] || cargo build --profile dist --quiet --bin bcp-bridge
. bench/executables.sh
BRIDGE=${BRIDGE:-$TARGET/dist/bcp-bridge}
AXUM=${AXUM:-$(bench_exe baseline_axum)}
RMCP=${RMCP:-$(bench_exe baseline_rmcp)}
LOADGEN=${LOADGEN:-$(bench_exe loadgen)}
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
# agent's profile URL is not fetchable), default log level, twice: with the answer cache
# (search pages cached too, so search answers are kept like the other reads: only answers
# built wholly from cached entries are), and with the answer cache off (every call runs the
# brain: the "uncached" rows).
cat >"$WORK/bench-sample.toml" <<'TOML'
[store]
platform = "sample"

[negotiation]
enabled = false

[cache]
search = true

# A load generator on one address on purpose: the per-client budgets (on by default) off.
[inbound]
per_ip_per_minute = 0
per_agent_per_minute = 0
TOML
cat >"$WORK/bench-uncached.toml" <<'TOML'
[store]
platform = "sample"

[negotiation]
enabled = false

[cache]
answers = false

[inbound]
per_ip_per_minute = 0
per_agent_per_minute = 0
TOML

META='"meta":{"ucp-agent":{"profile":"https://agent.example/profile.json"}}'
call() { printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":{%s,%s}}}' "$1" "$META" "$2"; }
SEARCH=$(call search_catalog '"catalog":{"query":"shoes","filters":{"price":{"min":0,"max":100000}}}')
LOOKUP=$(call lookup_catalog '"catalog":{"ids":["prod_abc123","var_xyz789","prod_def456","prod_abc123_blu_10","prod_abc123_red_12","prod_moka_pot_default","prod_electric_kettle_default","prod_red_tshirt","item_123","item_456"]}')
PRODUCT=$(call get_product '"catalog":{"id":"prod_abc123","selected":[{"name":"Color","label":"Blue"},{"name":"Size","label":"10"}],"preferences":["Color","Size"]}')
CREATE=$(call create_cart '"cart":{"line_items":[{"item":{"id":"item_123"},"quantity":1},{"item":{"id":"item_456"},"quantity":2}]}')

: >"$WORK/rows.txt"
TOOLS=(search_catalog lookup_catalog_10 get_product get_cart)
CACHED=(search_catalog lookup_catalog_10 get_product)
declare -A BODIES=([search_catalog]="$SEARCH" [lookup_catalog_10]="$LOOKUP" [get_product]="$PRODUCT")

# Resident memory by kind: "total anon file exe" in kB, exe being the executable's own
# mapped pages (code and read-only data) apart from the libraries'.
memory() {
    python3 - "$1" <<'PY'
import os, sys
pid = sys.argv[1]
status = {l.split(":")[0]: l.split()[1] for l in open(f"/proc/{pid}/status") if l.startswith(("VmRSS", "RssAnon", "RssFile"))}
exe = os.readlink(f"/proc/{pid}/exe")
own, current = 0, None
for line in open(f"/proc/{pid}/smaps"):
    fields = line.split()
    if "-" in fields[0] and len(fields) >= 5 and ":" in fields[3]:
        current = fields[5] if len(fields) > 5 else ""
    elif fields[0] == "Rss:" and current == exe:
        own += int(fields[1])
print(status["VmRSS"], status["RssAnon"], status["RssFile"], own)
PY
}

# Answer cache on: idle RSS (started, no call yet), the same after one call of each kind,
# and the cached rows.
start bridge "$BRIDGE" serve --config "$WORK/bench-sample.toml" --listen
URL="http://127.0.0.1:$PORT/bcp/mcp"
sleep 1
IDLE=$(memory "$PID")
CART=$(rpc "$URL" "$CREATE" | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["structuredContent"]["id"])')
BODIES[get_cart]=$(call get_cart "\"id\":\"$CART\"")
for tool in "${TOOLS[@]}"; do
    # The bridge's own answer, whole (fixed-bytes baseline) and its structuredContent (the
    # lean and rmcp baselines answer that same value).
    rpc "$URL" "${BODIES[$tool]}" >"$WORK/$tool.frame.json"
    python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))["result"]["structuredContent"], open(sys.argv[2],"w"), ensure_ascii=False, separators=(",",":"))' \
        "$WORK/$tool.frame.json" "$WORK/$tool.payload.json"
done
sleep 1
WARM=$(memory "$PID")
for tool in "${CACHED[@]}"; do
    load "cached:$tool" "$URL" "${BODIES[$tool]}"
done
CACHED_HITS=$(curl -s "${URL%/bcp/mcp}/metrics" | awk '/^bcp_answer_cache_hits_total/ {s+=$2} END {print s+0}')
LOADED_KB=$(awk '/VmHWM/ {print $2}' "/proc/$PID/status")
stop

# Answer cache off: every call through the brain.
start uncached "$BRIDGE" serve --config "$WORK/bench-uncached.toml" --listen
URL="http://127.0.0.1:$PORT/bcp/mcp"
CART=$(rpc "$URL" "$CREATE" | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["structuredContent"]["id"])')
BODIES[get_cart]=$(call get_cart "\"id\":\"$CART\"")
for tool in "${TOOLS[@]}"; do
    load "bridge:$tool" "$URL" "${BODIES[$tool]}"
done
UNCACHED_HITS=$(curl -s "${URL%/bcp/mcp}/metrics" | awk '/^bcp_answer_cache_hits_total/ {s+=$2} END {print s+0}')
LOADED_KB=$(( $(awk '/VmHWM/ {print $2}' "/proc/$PID/status") > LOADED_KB ? $(awk '/VmHWM/ {print $2}' "/proc/$PID/status") : LOADED_KB ))
stop
[ "$UNCACHED_HITS" = 0 ] || { echo "the uncached bridge answered $UNCACHED_HITS calls from its answer cache"; exit 1; }
[ "$CACHED_HITS" -gt 0 ] || { echo "the cached bridge kept no answer"; exit 1; }

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
printf '[store]\nplatform = "sample"\nmax_carts = %s\n\n[negotiation]\nenabled = false\n\n[inbound]\nper_ip_per_minute = 0\nper_agent_per_minute = 0\n' "$CART_BOUND" >"$WORK/bench-carts.toml"
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

python3 - "$WORK" "${IDLE%% *}" "$LOADED_KB" "$CARTS_IDLE_KB" "$CARTS_FULL_KB" "$FULL_STATUS" \
    "$CART_BOUND" "$FILL_STARTED" "$FILL_ENDED" "$DURATION" "$CONNECTIONS" "$PINNING" \
    "$IDLE" "$WARM" "$BRIDGE" <<'PY'
import json, os, sys
(work, idle_kb, loaded_kb, carts_idle_kb, carts_full_kb, full_status, bound, t0, t1,
 duration, conns, pinning, idle, warm, bridge) = sys.argv[1:]
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
L.append("## Catalog reads and a cart read under load\n")
L.append(f"`bench/throughput.sh`: {conns} keep-alive connections, {duration} s per row, loopback, {pinning}; "
         "load from `benches/loadgen.rs` (closed loop, one thread). Server CPU is utime+stime of the server "
         "process over the row, divided by the calls answered. Every baseline answers the bridge's own answer "
         "for that call, captured in the same run, so each group compares one payload size. "
         "The bridge runs the sample store with negotiation off, at the default log level: once with the "
         "answer cache (`[cache] search = true`, the catalog reads answered from kept answers from the third "
         "call on: an answer is kept when its read is asked the second time; every step before "
         "the brain still runs), once with `[cache] answers = false` (every call through the brain). `get_cart` is never kept, so it has the uncached row only.\n")
L.append("| call | server | answer bytes | req/s | p50 ms | p99 ms | server CPU µs/call | non-200 |")
L.append("|---|---|---:|---:|---:|---:|---:|---:|")
servers = [("fixed", '"fixed bytes" axum (the answer frame as fixed bytes)'),
           ("lean", '"lean double-encoding" axum (request → Value, answer encoded twice)'),
           ("rmcp", "rmcp floor (the same answer as a fixed value)"),
           ("cached", "**bcp-bridge**, answer cache"),
           ("bridge", "**bcp-bridge**, answer cache off")]
for tool in tools:
    for key, label in servers:
        r = rows.get(f"{key}:{tool}")
        if r is None:
            continue
        L.append(f"| {names[tool]} | {label} | {r['body_bytes']} | {r['rps']} | {r['p50_ms']:.2f} | "
                 f"{r['p99_ms']:.2f} | {r['server_cpu_us']} | {r['non_200'] + r['errors']} |")
L.append("")
L.append("### Targets (issue 25)\n")
L.append("| target | measured | |")
L.append("|---|---|---|")
def mark(ok): return "met" if ok else "**missed**"
for tool in tools:
    c = rows.get(f"cached:{tool}")
    if c:
        fixed = rows[f"fixed:{tool}"]
        ratio = c["rps"] / fixed["rps"]
        L.append(f"| {names[tool]}, cached ≥ 0.5× fixed bytes (req/s) | {ratio:.2f}× "
                 f"(CPU {c['server_cpu_us']} vs {fixed['server_cpu_us']} µs) | {mark(ratio >= 0.5)} |")
for tool in tools:
    b, lean, rmcp = rows[f"bridge:{tool}"], rows[f"lean:{tool}"], rows[f"rmcp:{tool}"]
    ratio_lean, ratio_rmcp = b["rps"] / lean["rps"], b["rps"] / rmcp["rps"]
    L.append(f"| {names[tool]}, uncached ≥ 0.8× lean double-encoding (req/s) | {ratio_lean:.2f}× "
             f"(CPU {b['server_cpu_us']} vs {lean['server_cpu_us']} µs) | {mark(ratio_lean >= 0.8)} |")
    L.append(f"| {names[tool]}, uncached ≥ 2× the rmcp floor (req/s) | {ratio_rmcp:.2f}× | {mark(ratio_rmcp >= 2)} |")
for tool in tools:
    for key in ("cached", "bridge"):
        r = rows.get(f"{key}:{tool}")
        if r:
            kind = "cached" if key == "cached" else "uncached"
            L.append(f"| {names[tool]}, {kind}, p99 < 2 ms at {conns} connections | {r['p99_ms']:.2f} ms | {mark(r['p99_ms'] < 2)} |")
idle_mb, loaded_mb = int(idle_kb) / 1024, int(loaded_kb) / 1024
L.append(f"| idle RSS < 20 MB | {idle_mb:.1f} MB | {mark(idle_mb < 20)} |")
L.append(f"| RSS under load (peak over the rows above) | {loaded_mb:.1f} MB | |")
L.append("")
L.append("### What the idle figure is made of\n")
L.append("Read from `/proc/<pid>/status` and `/proc/<pid>/smaps` of the answer-cache bridge: idle (started, "
         "no call yet), then after one call of each kind above. File pages are clean pages of the executable "
         "or a library, mapped as code runs (the kernel maps the pages around each one touched, "
         "`fault_around_bytes`): shared with every process mapping the same file and dropped by the kernel "
         "under pressure, paged in rather than owned. Anonymous pages are the bridge's own memory.\n")
L.append("| part | idle, MB | after one call of each kind, MB |")
L.append("|---|---:|---:|")
i, w = [int(x) / 1024 for x in idle.split()], [int(x) / 1024 for x in warm.split()]
L.append(f"| resident (VmRSS) | {i[0]:.1f} | {w[0]:.1f} |")
L.append(f"| anonymous (heap, stacks, relocated data) | {i[1]:.1f} | {w[1]:.1f} |")
L.append(f"| file pages, all | {i[2]:.1f} | {w[2]:.1f} |")
L.append(f"| of which the executable's own (code, read-only data) | {i[3]:.1f} | {w[3]:.1f} |")
L.append(f"\nThe executable is {os.path.getsize(bridge)/1024/1024:.1f} MB on disk.\n")
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
