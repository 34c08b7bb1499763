#!/usr/bin/env bash
# Load run (issues 5 and 25): 200 concurrent agents against the shipped (`dist`) bridge on the sample
# store for DURATION, loopback only, from the project's own load generator
# (benches/loadgen.rs; nothing to install). Every connection plays agent sessions of the 7
# catalog and cart tools: create_cart, search_catalog, get_cart, lookup_catalog, update_cart,
# get_product, cancel_cart; the cart calls use the cart that session created (loadgen
# --capture), so carts exist when read and are gone when the session ends (the store's cart
# bound is never near). The bodies carry 50 distinct agent profiles (negotiation off, so the
# URLs need not answer). Answer cache: three sessions in four read a small hot set of
# arguments (hits once kept), the fourth sends a buyer postal code no call has sent before
# (misses). The hit ratio comes from /metrics after the run, with peak RSS (VmHWM) and
# /healthz. Idempotency records (every cancel carries a fresh key) go to a redis-server of its
# own on loopback, as a store taking thousands of keyed mutations a second should run; the
# in-memory store would hold them for 24 h up to its byte bound and then refuse new keys.
# Writes the section between the LOAD markers of BENCHMARKS.md (OUT) and leaves the
# others alone. Knobs: DURATION (60s), CONNECTIONS (200), AGENTS (50), OUT, BRIDGE, LOADGEN,
# REDIS_SERVER (path of redis-server; Debian's package redis-server), ANSWER_BYTES, MAX_ENTRIES.
# Honours CARGO_TARGET_DIR. Not run by CI; bench/run.sh runs it unless SKIP_LOAD=1.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DURATION=${DURATION:-60s}
DURATION=${DURATION%s}
CONNECTIONS=${CONNECTIONS:-200}
AGENTS=${AGENTS:-50}
OUT=${OUT:-$ROOT/BENCHMARKS.md}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
WORK=$TARGET/bench/load
mkdir -p "$WORK"
export CARGO_TERM_COLOR=never

echo "== building the bridge and the load generator (dist profile, as shipped)"
# BRIDGE=path / LOADGEN=path load another build (e.g. one copied aside before a change).
[ -n "${BRIDGE:-}" ] || cargo build --profile dist --quiet --bin bcp-bridge
. bench/executables.sh
LOADGEN=${LOADGEN:-$(bench_exe loadgen)}
BRIDGE=${BRIDGE:-$TARGET/dist/bcp-bridge}
for exe in "$BRIDGE" "$LOADGEN"; do
    [ -x "$exe" ] || { echo "missing executable: $exe"; exit 1; }
done

# 200 connections on one thread and the server on the other core: each side gets a core.
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
    ON_SERVER="taskset -c 0"
    ON_LOAD="taskset -c 1"
    PINNING="server pinned to core 0, load generator to core 1 (taskset)"
else
    ON_SERVER=""
    ON_LOAD=""
    PINNING="not pinned"
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
REDIS_SERVER=${REDIS_SERVER:-$(command -v redis-server || true)}
[ -x "$REDIS_SERVER" ] || { echo "redis-server not found (apt-get install redis-server, or set REDIS_SERVER)"; exit 1; }
REDIS_PORT=$(free_port)
# Beside the load generator: the server's core stays the bridge's alone.
$ON_LOAD "$REDIS_SERVER" --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
    --dir "$WORK" >"$WORK/redis.out" 2>&1 &
REDIS_PID=$!
PORT=$(free_port)
# Defaults everywhere else: answer cache on (64 MiB), product cache 60 s / 10,000 entries,
# default cart bound; search pages cached so search answers are kept too.
cat >"$WORK/load.toml" <<'TOML'
[store]
platform = "sample"

[negotiation]
enabled = false

[cache]
search = true
TOML
# ANSWER_BYTES=n bounds the answer cache below its 64 MiB default (to see its share of RSS).
[ -z "${ANSWER_BYTES:-}" ] || echo "answer_bytes = $ANSWER_BYTES" >>"$WORK/load.toml"
ANSWER_BYTES=${ANSWER_BYTES:-default}
# MAX_ENTRIES=n bounds each of the product cache's three maps below its 10,000 entries.
[ -z "${MAX_ENTRIES:-}" ] || echo "max_entries = $MAX_ENTRIES" >>"$WORK/load.toml"
# 200 connections from one address on purpose: the per-client budgets (on by default) off.
printf '\n[inbound]\nper_ip_per_minute = 0\nper_agent_per_minute = 0\n' >>"$WORK/load.toml"
printf '\n[idempotency]\nbackend = "redis"\nredis_url = "redis://127.0.0.1:%s/"\n' "$REDIS_PORT" >>"$WORK/load.toml"

$ON_SERVER "$BRIDGE" serve --config "$WORK/load.toml" --listen "127.0.0.1:$PORT" \
    >"$WORK/bridge.out" 2>"$WORK/bridge.err" &
PID=$!
trap 'kill $PID $REDIS_PID 2>/dev/null || true' EXIT
for _ in $(seq 1 200); do
    curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
    sleep 0.05
done
curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null || { echo "bridge did not start"; cat "$WORK/bridge.err"; exit 1; }

ROOT=$ROOT python3 - "$LOADGEN" "$PID" "$PORT" "$CONNECTIONS" "$DURATION" "$AGENTS" "$WORK" "$OUT" \
    "$PINNING" "$ON_LOAD" "$ANSWER_BYTES" "$REDIS_PID" <<'PY'
import datetime, json, os, re, subprocess, sys, time, urllib.request

loadgen, pid, port, connections, duration, agents, work, out, pinning, on_load, answer_bytes, redis_pid = sys.argv[1:]
connections, agents = int(connections), int(agents)
base = f"http://127.0.0.1:{port}"

def post(body):
    request = urllib.request.Request(base + "/bcp/mcp", data=body.encode(), headers={
        "content-type": "application/json", "accept": "application/json, text/event-stream"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())

def get(path):
    with urllib.request.urlopen(base + path, timeout=10) as answer:
        return answer.status, answer.read().decode()

store = json.load(open(os.path.join(os.environ["ROOT"], "src", "platform", "sample", "store.json")))
products = store["products"]
variants = [v["id"] for p in products for v in p["variants"] if v.get("stock", 1) != 0]
ids = [p["id"] for p in products]
queries = ["shoes", "running shoes", "camiseta", "coffee", "hoodie", "jeans", "mug", "headphones"]

def profile(agent):
    return f"https://agent-{agent:02d}.example/profile.json"

def call(name, agent, arguments, key=None):
    meta = {"ucp-agent": {"profile": profile(agent)}}
    if key:
        meta["idempotency-key"] = key
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": name, "arguments": {"meta": meta, **arguments}}},
                      separators=(",", ":"))

def session(block):
    """One agent's session: 7 calls, the cart ones on the cart it creates ({capture})."""
    agent = block % agents
    cold = block % 4 == 3
    # A buyer postal code nobody sent before: an answer-cache miss by construction.
    context = {"context": {"address_country": "BR", "postal_code": "{seq}"}} if cold else {}
    product = products[block % len(products)]
    selected = [{"name": o["name"], "label": o["values"][block % len(o["values"])]}
                for o in product.get("options", [])[:2]]
    line = lambda at, q: {"item": {"id": variants[at % len(variants)]}, "quantity": q}
    return [
        call("create_cart", agent, {"cart": {"line_items": [line(block, 1)]}}),
        call("search_catalog", agent, {"catalog": {"query": queries[block % len(queries)],
             "filters": {"price": {"min": 0, "max": 100000}}, **context}}),
        call("get_cart", agent, {"id": "{capture}"}),
        call("lookup_catalog", agent, {"catalog": {"ids": [ids[(block + k) % len(ids)] for k in range(0, 40, 4)],
             **context}}),
        call("update_cart", agent, {"id": "{capture}", "cart": {"line_items": [line(block, 2), line(block + 11, 1)]}}),
        call("get_product", agent, {"catalog": {"id": product["id"], "selected": selected,
             "preferences": [s["name"] for s in selected], **context}}),
        call("cancel_cart", agent, {"id": "{capture}"}, key="load-{seq}"),
    ]

# As many sessions as agents × 8: each agent shows up with hot and cold sessions.
blocks = [session(b) for b in range(agents * 8)]
# Every kind of body answers a result before the load (one hot and one cold session).
for block in (blocks[0], blocks[3]):
    cart = None
    for n, body in enumerate(block):
        filled = body.replace("{seq}", str(90_000_000 + n)).replace("{capture}", cart or "")
        reply = post(filled)
        content = reply.get("result", {}).get("structuredContent", {})
        if "result" not in reply or (content.get("ucp") or {}).get("status") == "error":
            raise SystemExit(f"not a result: {filled[:300]} -> {json.dumps(reply)[:400]}")
        if cart is None:
            cart = content["id"]
with open(f"{work}/bodies.jsonl", "w") as f:
    for block in blocks:
        f.write("\n".join(block) + "\n")

def metrics():
    _, text = get("/metrics")
    return text

def counter(text, name, **labels):
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and all(f'{k}="{v}"' in line for k, v in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total

def rss(field, of=pid):
    return int(next(l.split()[1] for l in open(f"/proc/{of}/status") if l.startswith(field)))

time.sleep(1)
before = metrics()
idle_kb = rss("VmRSS")
command = (on_load.split() if on_load else []) + [
    loadgen, "--url", f"{base}/bcp/mcp", "--bodies-file", f"{work}/bodies.jsonl", "-c", str(connections),
    "-z", duration, "--offset-step", "7", "--capture", "cart_", "--pid", pid]
print(f"== load: {duration}s, {connections} connections, {len(blocks)} sessions of 7 calls, {agents} agents", flush=True)
result = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
time.sleep(1)
after = metrics()
peak_kb, after_kb = rss("VmHWM"), rss("VmRSS")
redis_kb = rss("VmRSS", redis_pid)
alive, _ = get("/healthz")
json.dump(result, open(f"{work}/result.json", "w"), indent=1)

tools = ["search_catalog", "lookup_catalog", "get_product", "create_cart", "get_cart", "update_cart", "cancel_cart"]
def delta(name, **labels):
    return counter(after, name, **labels) - counter(before, name, **labels)
hits = {t: delta("bcp_answer_cache_hits_total", tool=t) for t in tools[:3]}
misses = {t: delta("bcp_answer_cache_misses_total", tool=t) for t in tools[:3]}
outcomes = {}
for line in after.splitlines():
    m = re.match(r'bcp_tool_calls_total\{(.*)\} (\S+)', line)
    if m:
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        if labels.get("tool") in tools:
            key = (labels["tool"], labels.get("outcome", "?"))
            outcomes[key] = float(m.group(2)) - counter(before, "bcp_tool_calls_total", **labels)

rows, total, failed = [], 0, 0
for tool in tools:
    t = result["tools"].get(tool, {"requests": 0, "rps": 0, "p50_ms": 0, "p99_ms": 0, "non_200": 0, "errors": 0, "not_result": 0})
    bad = t["non_200"] + t["errors"] + t["not_result"]
    total += t["requests"]; failed += bad
    h, m = hits.get(tool), misses.get(tool)
    ratio = f"{h / (h + m):.0%} ({int(h)}/{int(h + m)})" if h is not None and h + m else "–"
    other = {o: int(n) for (name, o), n in outcomes.items() if name == tool and o not in ("ok", "success") and n}
    rows.append(f"| `{tool}` | {t['requests']} | {t['rps']} | {t['p50_ms']:.2f} | {t['p99_ms']:.2f} | "
                f"{t['non_200']} | {t['not_result']} | {t['errors']} | {ratio} | "
                f"{', '.join(f'{o} {n}' for o, n in other.items()) or 0} |")
all_h, all_m = sum(hits.values()), sum(misses.values())
hit_ratio = all_h / (all_h + all_m) if all_h + all_m else 0
peak_mb = peak_kb / 1024
def mark(ok): return "met" if ok else "**missed**"
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
section = f"""<!-- LOAD:BEGIN (bench/load.sh) -->
## Load: {connections} concurrent agents for {duration} s (issues 5 and 25)

`bench/load.sh`, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, on {cpu}, {os.cpu_count()} cores,
a virtual machine (throughput and latency carry its neighbours' noise; run nothing else beside it).
Release bridge on the sample store, negotiation off, product and answer caches at their defaults
with search pages cached (`[cache] search = true`); inbound budgets off (`[inbound]` 0: all load comes from one address), so any 429
would be unintended. {pinning[0].upper() + pinning[1:]}. Load from `benches/loadgen.rs`: {connections} closed-loop keep-alive
connections on one thread, each playing agent sessions of seven calls — `create_cart`,
`search_catalog`, `get_cart`, `lookup_catalog` (10 ids), `update_cart` (2 lines), `get_product`
(selections and preferences), `cancel_cart` (a fresh idempotency key) — where the cart calls act on
the cart that session created, so every cart read exists and every cart is cancelled at the end
of its session (live carts stay near one per connection, far from the store's bound). {len(blocks)}
sessions over {agents} distinct agent profiles (`meta.ucp-agent.profile`). Answer cache: three
sessions in four read a small hot set (8 queries, 10-id windows and selections over the 40
products), the fourth carries a buyer postal code no call sent before, so its three reads miss
by construction. Failures: non-200 answers, JSON-RPC error frames and transport errors, counted
by the load generator per call; the last column is the bridge's own outcome count
(`bcp_tool_calls_total`) for anything but `success`.

| tool | requests | req/s | p50 ms | p99 ms | non-200 | JSON-RPC errors | transport errors | answer-cache hits | other outcomes |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---|
""" + "\n".join(rows) + f"""

Total {total} requests ({result['rps']} req/s, p99 {result['p99_ms']:.2f} ms), **{failed} failed**. Answer cache over
the run (from `/metrics`): {int(all_h)} hits, {int(all_m)} misses, hit ratio {hit_ratio:.0%}. Server CPU
{result['server_cpu_us']} µs per call. RSS idle before the load {idle_kb / 1024:.1f} MB, peak (`VmHWM`)
{peak_mb:.1f} MB, {after_kb / 1024:.1f} MB after; `/healthz` after the run: {alive}.

| target | measured | |
|---|---:|---|
| RSS under the {connections}-connection load < 60 MB | {peak_mb:.1f} MB | {mark(peak_mb < 60)} |
| no failed call | {failed} | {mark(failed == 0)} |

What the RSS holds: every `cancel_cart` carries a fresh idempotency key, and its record is kept
24 h (`[idempotency] ttl_secs`); the {result['tools'].get('cancel_cart', {}).get('requests', 0)} records of this run live in the
redis-server beside the bridge (`[idempotency] backend = "redis"`; its RSS after the run:
{redis_kb / 1024:.1f} MB), not in the bridge. The in-memory store would keep them in the bridge up to
`[idempotency] memory_bytes` (128 MiB) and then refuse new keys (503): at this rate that bound
fills in under a minute, so a store taking keyed mutations at thousands per second runs Redis.
In the bridge, the cold reads (a buyer postal code nobody sent before) are not kept by the
answer cache, which keeps an answer the second time its read is asked: it holds the repeated
reads only, far below its byte bound (`[cache] answer_bytes`: {'64 MiB, the default' if answer_bytes == 'default' else answer_bytes + ' bytes'}).
They do fill the product cache towards `max_entries` (per map, per buyer context), which grows
with the run's length and rate up to that bound, so a longer or faster run shows a higher
peak; carts do not (each session cancels its own). `MAX_ENTRIES=500 bench/load.sh` shows the
product cache's share.

Caveats: client and server share the loopback and one core each, so the figures are the
bridge's throughput with one core, not a capacity; the sample store answers from memory, so a
miss costs the brain and the encoding but no upstream round trip (with a real store a miss also
pays the upstream). A session's calls run in order on one connection, so every tool gets the
same number of calls, and the slow ones set the pace for all.
<!-- LOAD:END -->
"""
text = open(out).read() if os.path.exists(out) else "# Benchmarks\n"
if "<!-- LOAD:BEGIN" in text:
    text = re.sub(r"<!-- LOAD:BEGIN.*?<!-- LOAD:END -->\n", lambda _: section, text, flags=re.S)
else:
    text = text.rstrip("\n") + "\n\n" + section
open(out, "w").write(text)
print(section)
PY
