#!/usr/bin/env bash
# Soak run (issue 27): the shipped (`dist`) bridge on the sample store behind a small product cache,
# under mixed closed-loop traffic for SOAK_MINUTES (default 30), with cache churn:
#   - traffic (benches/loadgen.rs, --bodies-file): search_catalog over several queries,
#     lookup_catalog, get_product over every product, create_cart (carts expire after
#     60 s, so the cart book turns over instead of growing to its bound), update_cart and
#     get_cart on one cart;
#   - churn: cache of 32 entries with a 5 s TTL, search pages cached too, and a signed
#     product webhook (POST /webhooks/woocommerce, HMAC-SHA256 as the store signs it) every
#     WEBHOOK_EVERY seconds (default 3), rotating over the products;
#   - every minute: RSS (VmRSS), open fds (/proc/PID/fd), calls answered, p99 of that
#     minute, errors (non-200, transport, JSON-RPC errors), webhooks accepted.
# The bound: over the second half of the run the fitted RSS slope is below 0.1 MB/min and
# the fd slope below 0.5 fd/min, and once the load stops the fd count is back within 2 of
# its idle value before the load; no errors. Writes the section between the SOAK markers of
# BENCHMARKS.md (OUT) and leaves the others alone. Server and load generator are pinned to
# separate cores (taskset) as in throughput.sh. Knobs: SOAK_MINUTES (30), CONNECTIONS (8),
# WEBHOOK_EVERY (3), OUT, BRIDGE, LOADGEN. Honours CARGO_TARGET_DIR. Not run by CI; `bench/run.sh` runs it
# when SOAK_MINUTES is set.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
MINUTES=${SOAK_MINUTES:-30}
CONNECTIONS=${CONNECTIONS:-8}
WEBHOOK_EVERY=${WEBHOOK_EVERY:-3}
OUT=${OUT:-$ROOT/BENCHMARKS.md}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
WORK=$TARGET/bench/soak
mkdir -p "$WORK"
export CARGO_TERM_COLOR=never

echo "== building the bridge and the load generator (dist profile, as shipped)"
# BRIDGE=path / LOADGEN=path soak another build (e.g. one copied aside before a change).
[ -n "${BRIDGE:-}" ] || cargo build --profile dist --quiet --bin bcp-bridge
. bench/executables.sh
LOADGEN=${LOADGEN:-$(bench_exe loadgen)}
BRIDGE=${BRIDGE:-$TARGET/dist/bcp-bridge}
for exe in "$BRIDGE" "$LOADGEN"; do
    [ -x "$exe" ] || { echo "missing executable: $exe"; exit 1; }
done

if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
    ON_SERVER="taskset -c 0"
    ON_LOAD="taskset -c 1"
    PINNING="server pinned to core 0, load generator and webhook sender to core 1 (taskset)"
else
    ON_SERVER=""
    ON_LOAD=""
    PINNING="not pinned"
fi

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# A webhook secret generated per run: nothing to keep, nothing committed.
SECRET=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
cat >"$WORK/soak.toml" <<TOML
[store]
platform = "sample"
cart_ttl_secs = 60

[negotiation]
enabled = false

[cache]
enabled = true
ttl_secs = 5
max_entries = 32
search = true
webhook_secret = "$SECRET"

# A load generator on one address on purpose: the per-client budgets (on by default) off.
[inbound]
per_ip_per_minute = 0
per_agent_per_minute = 0
TOML

$ON_SERVER "$BRIDGE" serve --config "$WORK/soak.toml" --listen "127.0.0.1:$PORT" \
    >"$WORK/bridge.out" 2>"$WORK/bridge.err" &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
for _ in $(seq 1 200); do
    curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
    sleep 0.05
done
curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null || { echo "bridge did not start"; cat "$WORK/bridge.err"; exit 1; }

ROOT=$ROOT SOAK_MINUTES=$MINUTES python3 - "$BRIDGE" "$LOADGEN" "$PID" "$PORT" "$SECRET" "$CONNECTIONS" \
    "$WEBHOOK_EVERY" "$WORK" "$OUT" "$PINNING" "$ON_LOAD" <<'PY'
import base64, datetime, hashlib, hmac, json, os, re, subprocess, sys, threading, time
import urllib.request

bridge, loadgen, pid, port, secret, connections, webhook_every, work, out, pinning, on_load = sys.argv[1:]
minutes = int(os.environ["SOAK_MINUTES"])
base = f"http://127.0.0.1:{port}"
url = f"{base}/bcp/mcp"
meta = {"ucp-agent": {"profile": "https://agent.example/profile.json"}}

def call(name, arguments):
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": {"meta": meta, **arguments}}}

def post(path, body, headers=None):
    data = json.dumps(body).encode() if not isinstance(body, bytes) else body
    request = urllib.request.Request(base + path, data=data, headers={
        "content-type": "application/json", "accept": "application/json, text/event-stream",
        **(headers or {})})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.status, answer.read()

def tool(name, arguments):
    _, raw = post("/bcp/mcp", call(name, arguments))
    reply = json.loads(raw)
    if "result" not in reply:
        raise SystemExit(f"{name}: {raw[:300]!r}")
    return reply["result"]["structuredContent"]

# The products of the embedded sample store (the file the binary embeds).
store = json.load(open(os.path.join(os.environ["ROOT"], "src", "platform", "sample", "store.json")))
ids = [p["id"] for p in store["products"]]
variants = [v["id"] for p in store["products"] for v in p["variants"]]

cart = tool("create_cart", {"cart": {"line_items": [{"item": {"id": variants[0]}, "quantity": 1}]}})["id"]
bodies = []
for query in ["shoes", "running shoes", "camiseta", "coffee", "hoodie", "jeans", "mug", "gift"]:
    bodies.append(call("search_catalog", {"catalog": {"query": query, "filters": {"price": {"min": 0, "max": 100000}}}}))
for at in range(0, len(variants), 10):
    bodies.append(call("lookup_catalog", {"catalog": {"ids": variants[at:at + 10]}}))
for product in ids:
    bodies.append(call("get_product", {"catalog": {"id": product}}))
for at in range(0, 40, 4):
    bodies.append(call("create_cart", {"cart": {"line_items": [
        {"item": {"id": variants[at % len(variants)]}, "quantity": 1},
        {"item": {"id": variants[(at + 7) % len(variants)]}, "quantity": 2}]}}))
    bodies.append(call("update_cart", {"id": cart, "cart": {"line_items": [
        {"item": {"id": variants[(at + 3) % len(variants)]}, "quantity": 1 + at % 3}]}}))
    bodies.append(call("get_cart", {"id": cart}))
# Interleave so every connection sees every kind of call within a few requests.
bodies = [bodies[(i * 7) % len(bodies)] for i in range(len(bodies))] if len(bodies) % 7 else bodies
with open(f"{work}/bodies.jsonl", "w") as f:
    for body in bodies:
        line = json.dumps(body, separators=(",", ":"))
        _, raw = post("/bcp/mcp", line.encode())
        if b'"result"' not in raw[:80]:
            raise SystemExit(f"not a result: {line[:200]} -> {raw[:300]!r}")
        f.write(line + "\n")
kinds = {}
for body in bodies:
    kinds[body["params"]["name"]] = kinds.get(body["params"]["name"], 0) + 1

def rss_kb():
    return int(next(l.split()[1] for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS")))

def fds():
    return len(os.listdir(f"/proc/{pid}/fd"))

time.sleep(1)
idle_rss, idle_fds = rss_kb(), fds()

# Webhooks: signed product updates, rotating over the products, every few seconds.
hooks = {"sent": 0, "ok": 0}
stop = threading.Event()
def webhooks():
    at = 0
    while not stop.wait(float(webhook_every)):
        body = json.dumps({"id": ids[at % len(ids)], "name": f"changed {at}"}).encode()
        signature = base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()
        hooks["sent"] += 1
        try:
            status, _ = post("/webhooks/woocommerce", body, {"X-WC-Webhook-Signature": signature})
            hooks["ok"] += status == 200
        except OSError:
            pass
        at += 1
sender = threading.Thread(target=webhooks, daemon=True)
sender.start()

command = (on_load.split() if on_load else []) + [loadgen, "--url", url, "--bodies-file", f"{work}/bodies.jsonl",
           "-c", connections, "-z", str(minutes * 60), "--report-every", "60", "--pid", pid]
print(f"== soak: {minutes} min, {connections} connections, {len(bodies)} bodies {kinds}, webhook every {webhook_every}s")
rows = []
load = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
final = None
for line in load.stdout:
    record = json.loads(line)
    if not record.get("interval"):
        final = record
        continue
    row = {"minute": len(rows) + 1, "rss_mb": rss_kb() / 1024, "fds": fds(), "hooks_ok": hooks["ok"],
           "hooks_sent": hooks["sent"], **record}
    rows.append(row)
    print(f"   min {row['minute']:>3}: RSS {row['rss_mb']:.1f} MB, fds {row['fds']}, {row['requests']} calls, "
          f"p99 {row['p99_ms']:.2f} ms, errors {row['non_200'] + row['errors'] + row['not_result']}, "
          f"webhooks {hooks['ok']}/{hooks['sent']}", flush=True)
load.wait()
stop.set()
sender.join()
time.sleep(5)
after_fds, after_rss = fds(), rss_kb()
with urllib.request.urlopen(f"{base}/healthz", timeout=5) as answer:
    alive = answer.status

def slope(points):
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    den = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / den if den else 0.0

half = rows[len(rows) // 2:]
rss_slope = slope([(r["minute"], r["rss_mb"]) for r in half])
fd_slope = slope([(r["minute"], r["fds"]) for r in half])
p99_slope = slope([(r["minute"], r["p99_ms"]) for r in half])
errors = sum(r["non_200"] + r["errors"] + r["not_result"] for r in rows)
rss_ok, fd_ok, back_ok = rss_slope < 0.1, abs(fd_slope) < 0.5, after_fds <= idle_fds + 2
errors_ok = errors == 0 and hooks["ok"] == hooks["sent"]
def mark(ok): return "met" if ok else "**missed**"

cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
table = "\n".join(
    f"| {r['minute']} | {r['rss_mb']:.1f} | {r['fds']} | {r['requests']} | {r['rps']} | {r['p50_ms']:.2f} | "
    f"{r['p99_ms']:.2f} | {r['non_200'] + r['errors'] + r['not_result']} | {r['hooks_ok']} |" for r in rows)
section = f"""<!-- SOAK:BEGIN (bench/soak.sh) -->
## Soak: {minutes} minutes of mixed traffic with cache churn and webhooks (issue 27)

`bench/soak.sh`, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, on {cpu}, {os.cpu_count()} cores,
**a shared machine** (other builds ran alongside, so latencies carry their noise; memory and fds do
not). Release bridge on the sample store, negotiation off, {pinning}. {connections} closed-loop
keep-alive connections from `benches/loadgen.rs` walking {len(bodies)} bodies
({", ".join(f"{v} {k}" for k, v in kinds.items())}): carts are created throughout and expire after 60 s.
Cache churn: product cache of 32 entries with a 5 s TTL, search pages cached too, and a signed product
webhook (`POST /webhooks/woocommerce`) every {webhook_every} s rotating over the {len(ids)} products.
Sampled at the end of every minute: RSS (`VmRSS`), open fds (`/proc/PID/fd`), the calls of that minute
and their p50/p99, errors (non-200, transport, JSON-RPC error frames), webhooks accepted so far.

| minute | RSS MB | fds | calls | calls/s | p50 ms | p99 ms | errors | webhooks accepted |
|---:|---:|---:|---:|---:|---:|---:|---:|---:|
{table}

Idle before the load: RSS {idle_rss / 1024:.1f} MB, {idle_fds} fds. Five seconds after the load: RSS
{after_rss / 1024:.1f} MB, {after_fds} fds; `/healthz` {alive}. Calls answered: {final['requests'] if final else '?'}
(p99 over the whole run {final['p99_ms'] if final else '?'} ms); webhooks {hooks['ok']}/{hooks['sent']} accepted.

Fitted over the second half (minutes {half[0]['minute'] if half else '-'}–{half[-1]['minute'] if half else '-'}, least squares):

| bound | measured | |
|---|---:|---|
| RSS slope < 0.1 MB/min after warm-up | {rss_slope:+.3f} MB/min | {mark(rss_ok)} |
| fd slope within ±0.5 fd/min | {fd_slope:+.3f} fd/min | {mark(fd_ok)} |
| fds back within 2 of idle once the load stops | {idle_fds} → {after_fds} | {mark(back_ok)} |
| no errors, every webhook accepted | {errors} errors, {hooks['ok']}/{hooks['sent']} webhooks | {mark(errors_ok)} |

p99 slope over the same half: {p99_slope:+.3f} ms/min (reported, not bounded: the machine is shared).

RSS follows the live carts (each lives 60 s, so their number follows the create rate of the last
minute) and the cache's churn, so it moves with throughput, which varies on a shared machine: read
the slope with the calls column beside it. Five seconds after the load the last minute's carts
are still live. create_cart answers include business errors (a sold-out variant among the bodies):
those are results, not errors.
<!-- SOAK:END -->
"""
json.dump({"rows": rows, "final": final, "idle": [idle_rss, idle_fds], "after": [after_rss, after_fds]},
          open(f"{work}/soak.json", "w"), indent=1)
text = open(out).read() if os.path.exists(out) else "# Benchmarks\n"
if "<!-- SOAK:BEGIN" in text:
    text = re.sub(r"<!-- SOAK:BEGIN.*?<!-- SOAK:END -->\n", lambda _: section, text, flags=re.S)
else:
    text = text.rstrip("\n") + "\n\n" + section
open(out, "w").write(text)
print(section)
PY
