"""The client of bench/store_load.sh (issue 39 item 4): agents against the bridge in front of a real
WooCommerce, beside the same requests sent straight to its Store API. Standard library only.

Every request the store serves is a line of its access log (`time METHOD URI STATUS ms ua=UA`):
the bridge's lines carry its own User-Agent (`bcp-bridge/…`), the direct client's `bench-direct`,
so each phase counts the store requests it caused from the lines added since its start. The
store's CPU is its PHP web server's (master and workers), read from /proc before and after.
"""

import base64
import bisect
import datetime
import hashlib
import hmac
import http.client
import json
import os
import random
import re
import secrets
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid

BRIDGE, STORE_URL, STORE_ROOT, OUT, WORK, PHP_SCRIPT = sys.argv[1:7]
STAMPEDE = [int(n) for n in os.environ.get("STAMPEDE", "50 200").split()]
DAY_SECONDS = float(os.environ.get("DAY_SECONDS", "300"))
DAY_SESSIONS = int(os.environ.get("DAY_SESSIONS", "200"))
WEBHOOK_EVERY = float(os.environ.get("WEBHOOK_EVERY", "3"))
# The same day (same seeds, same calls) again without webhooks: what the webhooks cost the cache.
DAY_CONTROL = os.environ.get("DAY_CONTROL", "1") == "1"
JOURNEYS = int(os.environ.get("JOURNEYS", "5"))
LOADED_NOTE = os.environ.get("LOADED_NOTE", "")
SEED = int(os.environ.get("SEED", "39"))
TTL = 60  # `[cache] ttl_secs` at its default
PROFILE = os.path.basename(os.path.dirname(os.path.abspath(BRIDGE)))

STORE = urllib.parse.urlparse(STORE_URL)
STORE_HOSTPORT = f"{STORE.hostname}:{STORE.port}"
STORE_API = "/wp-json/wc/store/v1"
ACCESS_LOG = os.path.join(STORE_ROOT, "access.log")
SECRET = secrets.token_hex(16)
PROFILES = [f"https://agents-{n}.example/profile.json" for n in range(20)]

BUYER = {"email": "bench.buyer@example.com", "first_name": "Ana", "last_name": "Souza",
         "phone_number": "11999990000"}
ADDRESS = {"first_name": "Ana", "last_name": "Souza", "street_address": "Rua Augusta, 100",
           "address_locality": "São Paulo", "address_region": "SP", "postal_code": "01305-000",
           "address_country": "BR"}
STORE_ADDRESS = {"first_name": "Ana", "last_name": "Souza", "address_1": "Rua Augusta, 100",
                 "city": "São Paulo", "state": "SP", "postcode": "01305-000", "country": "BR",
                 "email": "bench.buyer@example.com", "phone": "11999990000"}


def log(*parts):
    print("==", *parts, flush=True)


def percentile(values, p):
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def ms(seconds):
    return f"{seconds * 1000:.0f}"


# ---- the store: access log, CPU, prices -------------------------------------------------------

def log_mark():
    try:
        return os.path.getsize(ACCESS_LOG)
    except OSError:
        return 0


def store_requests(mark, settle=True):
    """Lines the store logged since `mark` as (method, uri, ua). PHP writes a line when its
    request ends, possibly just after the answer reached the client: wait until the log
    stops growing."""
    if settle:
        last = log_mark()
        while True:
            time.sleep(0.3)
            now = log_mark()
            if now == last:
                break
            last = now
    with open(ACCESS_LOG, "rb") as f:
        f.seek(mark)
        text = f.read().decode("utf-8", "replace")
    out = []
    for line in text.splitlines():
        parts = line.split(" ")
        if len(parts) >= 6:
            out.append((parts[1], parts[2], parts[-1].removeprefix("ua=")))
    return out


def by_bridge(lines):
    return [line for line in lines if line[2].startswith("bcp-bridge")]


def by_direct(lines):
    return [line for line in lines if line[2] == "bench-direct"]


def is_catalog(uri):
    path = uri.split("?", 1)[0]
    return path.startswith(STORE_API + "/products")


def catalog_kind(uri):
    path, _, query = uri.partition("?")
    if path.endswith("/categories"):
        return "category tree"
    if re.search(r"/products/[^/]+$", path):
        return "one product (`S/products/{id}`)"
    if "search=" in query:
        return "search page (`search=`)"
    if "type=variation" in query and "parent" in query:
        return "variations of products (`type=variation&parent=`)"
    return "products by id, SKU or slug (`include=`, `sku=`, `slug=`)"


def web_pids():
    master = open(os.path.join(STORE_ROOT, "web.pid")).read().strip()
    children = subprocess.run(["pgrep", "-P", master], capture_output=True, text=True).stdout.split()
    return [master, *children]


def store_cpu():
    """CPU seconds (user + system) the store's web server has used so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in web_pids():
        try:
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / ticks


def minor(price):
    whole, _, cents = str(price).partition(".")
    return int(whole) * 100 + int((cents + "00")[:2])


# ---- HTTP ---------------------------------------------------------------------------------------

class Client:
    """One keep-alive connection, from its own loopback address (an agent of its own)."""

    def __init__(self, host, port, source=None, ua="bench-agent"):
        self.host, self.port, self.source, self.ua = host, port, source, ua
        self.conn = None

    def connect(self):
        if self.conn is None:
            self.conn = http.client.HTTPConnection(
                self.host, self.port, timeout=60,
                source_address=(self.source, 0) if self.source else None)
            self.conn.connect()
            self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def request(self, method, path, body=None, headers=None):
        for attempt in (0, 1):
            try:
                self.connect()
                data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
                h = {"user-agent": self.ua, **(headers or {})}
                if data is not None:
                    h.setdefault("content-type", "application/json")
                self.conn.request(method, path, body=data, headers=h)
                answer = self.conn.getresponse()
                raw = answer.read()
                if answer.getheader("connection", "").lower() == "close":
                    self.close()
                return answer.status, dict((k.lower(), v) for k, v in answer.getheaders()), raw
            except (OSError, http.client.HTTPException):
                self.close()
                if attempt:
                    raise

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def agent_address(n):
    return f"127.1.{n // 250}.{n % 250 + 1}"


class Bridge:
    def __init__(self, name, extra=""):
        self.port = free_port()
        config = os.path.join(WORK, f"{name}.toml")
        with open(config, "w") as f:
            f.write(f'[store]\nplatform = "woocommerce"\nbase_url = "{STORE_URL}"\ncurrency = "BRL"\n'
                    f'name = "Loja Teste"\n\n[checkout]\nplace_with = ["bacs"]\n\n'
                    # The bench agents' profile URLs do not answer.
                    f'[negotiation]\nenabled = false\n\n'
                    f'[cache]\nwebhook_secret = "{SECRET}"\n{extra}\n')
        self.process = subprocess.Popen(
            [BRIDGE, "serve", "--config", config, "--listen", f"127.0.0.1:{self.port}"],
            stdout=open(os.path.join(WORK, f"{name}.out"), "w"),
            stderr=open(os.path.join(WORK, f"{name}.err"), "w"))
        deadline = time.time() + 20
        while True:
            try:
                status, _, _ = Client("127.0.0.1", self.port).request("GET", "/healthz")
                if status == 200:
                    break
            except OSError:
                pass
            if time.time() > deadline or self.process.poll() is not None:
                raise SystemExit(f"bridge {name} did not start: see {WORK}/{name}.err")
            time.sleep(0.05)

    def client(self, n=0):
        return Client("127.0.0.1", self.port, agent_address(n))

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def tool(client, name, arguments, profile=0, key=None):
    meta = {"ucp-agent": {"profile": PROFILES[profile % len(PROFILES)]}}
    if key:
        meta["idempotency-key"] = key
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": {"meta": meta, **arguments}}}
    status, _, raw = client.request("POST", "/bcp/mcp", body, {"accept": "application/json, text/event-stream"})
    try:
        reply = json.loads(raw)
    except ValueError:
        return status, None, raw[:200]
    result = reply.get("result")
    if status != 200 or result is None or result.get("isError"):
        return status, None, json.dumps(reply)[:300]
    content = result.get("structuredContent") or {}
    if (content.get("ucp") or {}).get("status") == "error":
        return status, None, json.dumps(content)[:300]
    return status, content, None


def direct(ua="bench-direct", n=0):
    return Client(STORE.hostname, STORE.port, None, ua)


# ---- the catalog ----------------------------------------------------------------------------------

PRODUCTS = json.loads(subprocess.run(["php", PHP_SCRIPT, STORE_ROOT, STORE_HOSTPORT, "catalog"],
                                     check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])
# Products whose stock the store does not count: checkouts can buy them all day.
BUYABLE = [p for p in PRODUCTS if p["name"].split()[0] in
           ("Camisa", "Calça", "Meia", "Boné", "Jaqueta", "Vestido", "Saia", "Mochila", "Relógio", "Sandália")]
NOUNS = sorted({p["name"].split()[0].lower() for p in BUYABLE})
ADJECTIVES = sorted({p["name"].split()[1].lower() for p in BUYABLE})
rng = random.Random(SEED)
# What agents ask, most popular first: nouns, then noun + adjective, then the rest (the tail).
QUERIES = ["camisa", "tênis", "bermuda", "mochila", "jaqueta", "vestido", "camisa azul", "garrafa",
           "calça jeans", "relógio"] + [f"{n} {a}" for n in NOUNS for a in ADJECTIVES][:60] + ADJECTIVES
QUERIES = list(dict.fromkeys(QUERIES))
POPULAR = PRODUCTS[:]
rng.shuffle(POPULAR)


def zipf(n, s=1.1):
    weights = [1 / (k ** s) for k in range(1, n + 1)]
    total = sum(weights)
    cumulative, acc = [], 0.0
    for w in weights:
        acc += w / total
        cumulative.append(acc)
    return lambda r: min(n - 1, bisect.bisect_left(cumulative, r.random()))


QUERY_RANK = zipf(len(QUERIES))
PRODUCT_RANK = zipf(len(POPULAR))
BUYABLE_RANK = zipf(len(BUYABLE))


# ---- stampede -------------------------------------------------------------------------------------

def release_together(n, prepare, act):
    """n threads: each prepares (connects), then all act at one barrier; answers their timings."""
    barrier = threading.Barrier(n + 1)
    results = [None] * n

    def run(i):
        prepare(i)
        barrier.wait()
        t0 = time.perf_counter()
        ok = act(i)
        results[i] = (time.perf_counter() - t0, ok)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    barrier.wait()
    for t in threads:
        t.join()
    return results


def stampede_case(label, tool_name, arguments, direct_uri, n):
    """A cold bridge, n agents asking the same read at once; then n direct clients each sending
    the one Store API request a client of its own would (`direct_uri`). Answers a row."""
    # One lone cold call on fresh bridges (median of 3): what one agent waits alone, and the
    # store requests one call costs.
    lone, lone_uris = [], []

    def lone_call(k):
        bridge = Bridge(f"lone-{tool_name}-{k}")
        client = bridge.client()
        client.connect()
        mark = log_mark()
        t0 = time.perf_counter()
        status, content, error = tool(client, tool_name, arguments)
        lone.append(time.perf_counter() - t0)
        if content is None:
            raise SystemExit(f"lone {tool_name}: {status} {error}")
        uris = [uri for _, uri, _ in by_bridge(store_requests(mark))]
        lone_uris[:] = lone_uris or uris
        client.close()
        bridge.stop()

    # Two before the stampede and one after: the machine's load drifts.
    lone_call(0)
    lone_call(1)

    bridge = Bridge(f"stampede-{tool_name}-{n}")
    clients = [bridge.client(i) for i in range(n)]
    failures = []
    mark, cpu0 = log_mark(), store_cpu()

    def act(i):
        status, content, error = tool(clients[i], tool_name, arguments, profile=i)
        if content is None:
            failures.append(f"{status} {error}")
        return content is not None

    timings = release_together(n, lambda i: clients[i].connect(), act)
    requests = by_bridge(store_requests(mark))
    cpu = store_cpu() - cpu0
    for c in clients:
        c.close()
    bridge.stop()
    latencies = [t for t, _ in timings]
    lone_call(2)
    lone_s = statistics.median(lone)

    # Direct: every agent sends its own request for the same read, all at once.
    clients = [direct() for _ in range(n)]
    mark, cpu0 = log_mark(), store_cpu()
    direct_failures = []

    def act_direct(i):
        status, _, _ = clients[i].request("GET", direct_uri)
        ok = status == 200
        if not ok:
            direct_failures.append(i)
        return ok

    dtimings = release_together(n, lambda i: clients[i].connect(), act_direct)
    drequests = by_direct(store_requests(mark))
    dcpu = store_cpu() - cpu0
    for c in clients:
        c.close()
    dlat = [t for t, _ in dtimings]
    row = {"label": label, "n": n, "lone_s": lone_s, "lone_requests": len(lone_uris),
           "requests": len(requests), "p50": percentile(latencies, 50), "p99": percentile(latencies, 99),
           "failed": len(failures), "cpu": cpu, "direct_requests": len(drequests),
           "direct_p50": percentile(dlat, 50), "direct_p99": percentile(dlat, 99),
           "direct_failed": len(direct_failures), "direct_cpu": dcpu, "uris": lone_uris,
           "failures": failures[:3]}
    log(f"{label} x{n}: bridge {row['requests']} store requests, p50 {ms(row['p50'])} ms, "
        f"p99 {ms(row['p99'])} ms (lone {ms(lone_s)} ms), {row['failed']} failed; direct "
        f"{row['direct_requests']} requests, p50 {ms(row['direct_p50'])} ms, p99 {ms(row['direct_p99'])} ms")
    return row


# ---- the journey -----------------------------------------------------------------------------------

JOURNEY_QUERY = "camisa azul"


def journey_product():
    return next(p for p in BUYABLE if p["name"] == "Camisa Azul")


def bridge_journey(bridge, n):
    """search → product → cart → checkout → address → option → complete, through the bridge."""
    client = bridge.client(n)
    client.connect()
    steps = []

    def step(name, tool_name, arguments, key=None):
        mark = log_mark()
        t0 = time.perf_counter()
        status, content, error = tool(client, tool_name, arguments, key=key)
        took = time.perf_counter() - t0
        steps.append((name, took, [f"{m} {u.split('?')[0]}" for m, u, _ in by_bridge(store_requests(mark))]))
        if content is None:
            raise RuntimeError(f"journey {name}: {status} {error}")
        return content

    product = journey_product()
    step("search", "search_catalog", {"catalog": {"query": JOURNEY_QUERY}})
    step("product", "get_product", {"catalog": {"id": str(product["id"])}})
    cart = step("cart", "create_cart", {"cart": {"line_items": [{"item": {"id": str(product["id"])}, "quantity": 1}]}})
    checkout = step("checkout", "create_checkout", {"checkout": {"cart_id": cart["id"]}}, key=str(uuid.uuid4()))
    cid = checkout["id"]
    addressed = step("address", "update_checkout", {"id": cid, "checkout": {
        "buyer": BUYER, "fulfillment": {"methods": [{"type": "shipping", "destinations": [ADDRESS]}]}}})
    method = addressed["fulfillment"]["methods"][0]
    group = method["groups"][0]
    option = group["options"][0]["id"]
    step("option", "update_checkout", {"id": cid, "checkout": {"fulfillment": {"methods": [
        {"id": method["id"], "groups": [{"id": group["id"], "selected_option_id": option}]}]}}})
    done = step("complete", "complete_checkout", {"id": cid, "checkout": {
        "payment": {"instruments": [{"handler_id": "bacs"}]}}}, key=str(uuid.uuid4()))
    if done.get("status") != "completed":
        raise RuntimeError(f"journey complete: {json.dumps(done)[:300]}")
    client.close()
    return steps


def direct_journey():
    """The same journey as a minimal Store API client makes it (the floor)."""
    client = direct()
    client.connect()
    steps = []

    def step(name, method, path, body=None, headers=None, expect=(200, 201)):
        mark = log_mark()
        t0 = time.perf_counter()
        status, h, raw = client.request(method, STORE_API + path, body, headers)
        took = time.perf_counter() - t0
        steps.append((name, took, [f"{m} {u.split('?')[0]}" for m, u, _ in by_direct(store_requests(mark))]))
        if status not in expect:
            raise RuntimeError(f"direct {name}: {status} {raw[:300]!r}")
        return h, json.loads(raw)

    product = journey_product()
    step("search", "GET", "/products?search=" + urllib.parse.quote(JOURNEY_QUERY))
    step("product", "GET", f"/products/{product['id']}")
    # A guest has no Cart-Token yet: one read of the cart hands it out (no Nonce needed after).
    h, _ = step("cart", "GET", "/cart")
    token = {"cart-token": h["cart-token"]}
    step("cart", "POST", "/cart/add-item", {"id": product["id"], "quantity": 1}, token)
    # Nothing to open on the store for a checkout: the cart is it.
    steps.append(("checkout", 0.0, []))
    _, cart = step("address", "POST", "/cart/update-customer",
                   {"billing_address": STORE_ADDRESS, "shipping_address": STORE_ADDRESS}, token)
    rate = cart["shipping_rates"][0]["shipping_rates"][0]["rate_id"]
    step("option", "POST", "/cart/select-shipping-rate", {"package_id": 0, "rate_id": rate}, token)
    _, order = step("complete", "POST", "/checkout", {
        "billing_address": STORE_ADDRESS, "shipping_address": STORE_ADDRESS, "payment_method": "bacs"}, token)
    if order.get("status") not in ("on-hold", "processing"):
        raise RuntimeError(f"direct complete: {json.dumps(order)[:300]}")
    client.close()
    return steps


def journeys():
    bridge = Bridge("journey")
    rows = {"bridge": [], "direct": []}
    try:
        for k in range(JOURNEYS):
            for who in ("bridge", "direct") if k % 2 == 0 else ("direct", "bridge"):
                cpu0 = store_cpu()
                steps = bridge_journey(bridge, k) if who == "bridge" else direct_journey()
                # Wall time: the steps back to back (the log is read between them, off the clock).
                wall = sum(t for _, t, _ in steps)
                count = sum(len(u) for _, _, u in steps)
                rows[who].append({"wall": wall, "steps": steps, "requests": count,
                                  "cpu": store_cpu() - cpu0, "cold": who == "bridge" and k == 0,
                                  "uris": [u for _, _, us in steps for u in us]})
                log(f"journey {k} {who}: {wall * 1000:.0f} ms, {count} store requests")
    finally:
        bridge.stop()
    return rows


# ---- a day in miniature ------------------------------------------------------------------------------

class Versions:
    """Each webhooked product's prices in the store, in order, with when each was saved and when
    the bridge acknowledged its webhook."""

    def __init__(self):
        self.lock = threading.Lock()
        self.of = {p["id"]: [(minor(p["price"]), float("-inf"), float("-inf"))] for p in PRODUCTS}

    def add(self, pid, price, saved, acked):
        with self.lock:
            self.of[pid].append((price, saved, acked))

    def check(self, pid, price, sent):
        """None when fresh; else why not."""
        with self.lock:
            versions = list(self.of.get(pid, ()))
        if not versions:
            return None
        index = next((i for i, v in enumerate(versions) if v[0] == price), None)
        if index is None:
            return "unknown"
        required = max(i for i, v in enumerate(versions) if v[2] <= sent)
        if index < required:
            return f"webhook: sent {sent - versions[required][2]:.1f} s after the ack of version {required}, showed {index}"
        by_ttl = max(i for i, v in enumerate(versions) if v[1] <= sent - TTL)
        if index < by_ttl:
            return "ttl"
        return None


# One price history for the whole run: a later phase starts from the prices an earlier one left.
VERSIONS = Versions()


def metrics(bridge):
    _, _, raw = Client("127.0.0.1", bridge.port).request("GET", "/metrics")
    out = {}
    for line in raw.decode().splitlines():
        m = re.match(r"(bcp_[a-z_]+)(\{[^}]*\})? (\S+)$", line)
        if m and m.group(1) in ("bcp_answer_cache_hits_total", "bcp_answer_cache_misses_total",
                                "bcp_cache_hits_total", "bcp_cache_misses_total", "bcp_store_reads_shared_total"):
            out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return out


def answer_prices(content):
    """(product id, price in minor units) of every simple product an answer shows."""
    products = content.get("products") or ([content["product"]] if "product" in content else [])
    if not products and "id" in content and "variants" in content:
        products = [content]
    out = []
    for product in products:
        variants = product.get("variants") or []
        if len(variants) != 1:
            continue
        price = variants[0].get("price")
        amount = price.get("amount") if isinstance(price, dict) else price
        try:
            pid = int(str(product.get("id")))
        except ValueError:
            continue
        if isinstance(amount, int):
            out.append((pid, amount))
    return out


def day(webhooks_on=True):
    bridge = Bridge("day" if webhooks_on else "day-control")
    versions = VERSIONS
    stats = {"catalog": [], "cart": [], "checkout": []}
    calls = {"catalog": 0, "cart": 0, "checkout": 0}
    failures = []
    fresh = {"checked": 0, "webhook": 0, "ttl": 0, "unknown": 0, "answers": 0}
    orders = [0]
    lock = threading.Lock()
    stop = threading.Event()
    hooks = {"sent": 0, "ok": 0, "max_ack_s": 0.0}

    def record(kind, seconds, content, error, sent, name):
        with lock:
            stats[kind].append(seconds)
            calls[kind] += 1
            if content is None:
                failures.append(f"{kind}: {error}")
                return
            if kind == "catalog":
                fresh["answers"] += 1
                for pid, price in answer_prices(content):
                    fresh["checked"] += 1
                    verdict = versions.check(pid, price, sent)
                    if verdict:
                        fresh[verdict.split(":")[0]] += 1
                        if len(failures) < 50:
                            failures.append(f"stale ({verdict}): {name}, product {pid} at {price}")

    def session(n, r):
        client = bridge.client(n)
        profile = n % len(PROFILES)

        def call(kind, name, arguments, key=None):
            sent = time.time()
            t0 = time.perf_counter()
            try:
                status, content, error = tool(client, name, arguments, profile, key)
            except OSError as e:
                content, error = None, repr(e)
            record(kind, time.perf_counter() - t0, content, error, sent, name)
            time.sleep(r.uniform(0.3, 1.5))  # the agent thinks
            return content

        for _ in range(r.randint(3, 8)):
            pick = r.random()
            if pick < 0.5:
                call("catalog", "search_catalog", {"catalog": {"query": QUERIES[QUERY_RANK(r)]}})
            elif pick < 0.85:
                call("catalog", "get_product", {"catalog": {"id": str(POPULAR[PRODUCT_RANK(r)]["id"])}})
            else:
                ids = sorted({str(POPULAR[PRODUCT_RANK(r)]["id"]) for _ in range(3)})
                call("catalog", "lookup_catalog", {"catalog": {"ids": ids}})
        if r.random() < 0.4:
            lines = [{"item": {"id": str(BUYABLE[BUYABLE_RANK(r)]["id"])}, "quantity": r.randint(1, 2)}]
            cart = call("cart", "create_cart", {"cart": {"line_items": lines}})
            if cart and r.random() < 0.5:
                lines.append({"item": {"id": str(BUYABLE[BUYABLE_RANK(r)]["id"])}, "quantity": 1})
                cart = call("cart", "update_cart", {"id": cart["id"], "cart": {"line_items": lines}}) or cart
            if cart and r.random() < 0.4:
                checkout = call("checkout", "create_checkout", {"checkout": {"cart_id": cart["id"]}},
                                key=str(uuid.uuid4()))
                if checkout:
                    cid = checkout["id"]
                    addressed = call("checkout", "update_checkout", {"id": cid, "checkout": {
                        "buyer": BUYER, "fulfillment": {"methods": [{"type": "shipping", "destinations": [ADDRESS]}]}}})
                    try:
                        method = addressed["fulfillment"]["methods"][0]
                        group = method["groups"][0]
                        option = group["options"][r.randrange(len(group["options"]))]["id"]
                    except (TypeError, KeyError, IndexError):
                        method = None
                    if method:
                        ready = call("checkout", "update_checkout", {"id": cid, "checkout": {"fulfillment": {
                            "methods": [{"id": method["id"], "groups": [{"id": group["id"], "selected_option_id": option}]}]}}})
                        if ready:
                            done = call("checkout", "complete_checkout", {"id": cid, "checkout": {
                                "payment": {"instruments": [{"handler_id": "bacs"}]}}}, key=str(uuid.uuid4()))
                            if done and done.get("status") == "completed":
                                with lock:
                                    orders[0] += 1
        client.close()

    updater = subprocess.Popen(["php", PHP_SCRIPT, STORE_ROOT, STORE_HOSTPORT, "update"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    hook_client = Client("127.0.0.1", bridge.port)

    def webhooks():
        r = random.Random(SEED + 1)
        while not stop.wait(WEBHOOK_EVERY):
            product = POPULAR[PRODUCT_RANK(r)]
            with versions.lock:
                current = versions.of[product["id"]][-1][0]
            new = current + 100
            updater.stdin.write(f"{product['id']} {new // 100}.{new % 100:02d}\n")
            saved_line = updater.stdout.readline().split()
            saved = time.time()
            if len(saved_line) != 2 or minor(saved_line[1]) != new:
                failures.append(f"the store did not save {product['id']} at {new}: {saved_line}")
                continue
            body = json.dumps({"id": product["id"], "name": product["name"], "regular_price": saved_line[1],
                               "date_modified_gmt": datetime.datetime.now(datetime.timezone.utc).isoformat()}).encode()
            signature = base64.b64encode(hmac.new(SECRET.encode(), body, hashlib.sha256).digest()).decode()
            hooks["sent"] += 1
            t0 = time.time()
            status, _, _ = hook_client.request("POST", "/webhooks/woocommerce", body, {
                "x-wc-webhook-signature": signature, "x-wc-webhook-topic": "product.updated",
                "x-wc-webhook-delivery-id": str(uuid.uuid4())})
            acked = time.time()
            if status == 200:
                hooks["ok"] += 1
                hooks["max_ack_s"] = max(hooks["max_ack_s"], acked - t0)
                versions.add(product["id"], new, saved, acked)
            else:
                failures.append(f"webhook answered {status}")
                versions.add(product["id"], new, saved, float("inf"))

    mark, cpu0 = log_mark(), store_cpu()
    t_start = time.time()
    sender = threading.Thread(target=webhooks if webhooks_on and WEBHOOK_EVERY > 0 else stop.wait, daemon=True)
    sender.start()
    threads = []
    spacing = DAY_SECONDS / DAY_SESSIONS
    for n in range(DAY_SESSIONS):
        at = t_start + n * spacing + random.Random(SEED + 2 + n).uniform(0, spacing)
        time.sleep(max(0.0, at - time.time()))
        t = threading.Thread(target=session, args=(n, random.Random(SEED * 1000 + n)))
        t.start()
        threads.append(t)
        if n % max(1, DAY_SESSIONS // 10) == 0:
            log(f"day: session {n}/{DAY_SESSIONS}, {sum(calls.values())} calls, "
                f"{hooks['ok']} webhooks, {len(failures)} failures")
    for t in threads:
        t.join()
    stop.set()
    sender.join()
    elapsed = time.time() - t_start
    lines = by_bridge(store_requests(mark))
    cpu = store_cpu() - cpu0
    counters = metrics(bridge)
    updater.stdin.close()
    updater.wait(10)
    bridge.stop()
    catalog_requests = sum(1 for _, uri, _ in lines if is_catalog(uri))
    kinds = {}
    for method, uri, _ in lines:
        kind = catalog_kind(uri) if is_catalog(uri) else f"{method} {uri.split('?')[0].replace(STORE_API, 'S')}"
        kind = re.sub(r"/\d+$", "/{id}", kind)
        kinds[kind] = kinds.get(kind, 0) + 1
    return {"elapsed": elapsed, "calls": calls, "stats": stats, "failures": failures, "fresh": fresh,
            "hooks": hooks, "orders": orders[0], "requests": len(lines), "catalog_requests": catalog_requests,
            "cpu": cpu, "kinds": kinds, "metrics": counters}


# ---- the section ----------------------------------------------------------------------------------

def main():
    os.makedirs(WORK, exist_ok=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    load = os.getloadavg()
    popular_product = next(p for p in BUYABLE if p["name"] == "Camisa Azul")
    stampedes = []
    for n in STAMPEDE:
        stampedes.append(stampede_case("search_catalog \"camisa\"", "search_catalog", {"catalog": {"query": "camisa"}},
                                       f"{STORE_API}/products?page=1&per_page=10&search=camisa", n))
        stampedes.append(stampede_case(f"get_product (simple, id {popular_product['id']})", "get_product",
                                       {"catalog": {"id": str(popular_product["id"])}},
                                       f"{STORE_API}/products/{popular_product['id']}", n))
    log("journey: bridge and direct, alternating")
    journey = journeys()
    log(f"day in miniature: {DAY_SESSIONS} sessions over {DAY_SECONDS:.0f} s, webhook every {WEBHOOK_EVERY} s")
    today = day()
    control = None
    if DAY_CONTROL:
        log("the same day without webhooks")
        control = day(webhooks_on=False)
    json.dump({"stampede": stampedes, "journey": journey, "day": {k: v for k, v in today.items() if k != "stats"},
               "control": control and {k: v for k, v in control.items() if k != "stats"}},
              open(os.path.join(WORK, "store_load.json"), "w"), indent=1, default=str)
    write_section(started, load, stampedes, journey, today, control)


def mark(ok):
    return "met" if ok else "**missed**"


def write_section(started, load, stampedes, journey, today, control):
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    L = ["<!-- STORELOAD:BEGIN (bench/store_load.sh) -->",
         "## Store load: agents in front of a real WooCommerce (issue 39)\n",
         f"`bench/store_load.sh`, {started:%Y-%m-%d %H:%M} UTC, on {cpu}, {os.cpu_count()} cores "
         f"(load average {load[0]:.1f} at the start{LOADED_NOTE}). "
         "The store: WordPress 7.0.4 + WooCommerce 10.9.4 on PHP 8.2's built-in server with 4 workers and MariaDB "
         "(`.ci/real-woo.sh`, an instance of the bench's own, Brazilian Market off), the test catalog plus a long tail of 120 simple "
         f"products ({len(PRODUCTS)} simple products in all). The bridge ({PROFILE} build) at its defaults (answer and product "
         "cache on, search pages kept, 60 s TTL, `[upstream]` 20 requests/s, burst 40, 6 in flight), negotiation off "
         "(the bench profiles do not answer), a webhook secret set, `[checkout] place_with = [\"bacs\"]`; every agent "
         "from a loopback address of its own (`127.1.x.y`), so the per-address budgets stay at their defaults. "
         "Store requests are the lines of the store's access log with the bridge's User-Agent (the direct client's "
         "are counted apart); store CPU is the PHP web server's (master and workers) user + system time from /proc "
         "over the phase. Client: `bench/store_load.py` (Python threads, one keep-alive connection per agent); its own "
         "time is inside every latency, bridge and direct alike.\n"]

    L.append("### Stampede: N agents ask the same read at once, cold\n")
    L.append("A fresh bridge per row; the N calls released together at a barrier. **Lone**: one call on a fresh "
             "bridge, alone (median of 3: two before the stampede, one after); its store requests include the category tree a cold bridge reads once "
             "(`S/products/categories`) and, for a product, the listing of its variations. **Direct**: N clients "
             "each sending, at once, the one Store API request a client of its own needs for that read "
             "(`GET S/products?page=1&per_page=10&search=camisa`, `GET S/products/{id}`).\n")
    L.append("| read | N | lone ms (store req.) | bridge: store req. | p50 ms | p99 ms | p99 / lone | store CPU s | failed "
             "| direct: store req. | p50 ms | p99 ms | store CPU s |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    stampede_ok = True
    for s in stampedes:
        ratio = s["p99"] / s["lone_s"]
        one = s["requests"] <= s["lone_requests"]
        stampede_ok &= one and ratio <= 1.5 and s["failed"] == 0
        L.append(f"| {s['label']} | {s['n']} | {ms(s['lone_s'])} ({s['lone_requests']}) | {s['requests']} | "
                 f"{ms(s['p50'])} | {ms(s['p99'])} | {ratio:.2f}× | {s['cpu']:.1f} | {s['failed']} | "
                 f"{s['direct_requests']} | {ms(s['direct_p50'])} | {ms(s['direct_p99'])} | {s['direct_cpu']:.1f} |")
    L.append("")

    d = today
    catalog_calls = d["calls"]["catalog"]
    per_call = d["catalog_requests"] / catalog_calls if catalog_calls else 0
    all_lat = [x for v in d["stats"].values() for x in v]
    fresh = d["fresh"]
    L.append(f"### A day in miniature: {DAY_SESSIONS} agent sessions over {DAY_SECONDS / 60:g} min\n")
    L.append(f"Sessions start evenly over the run (ran {d['elapsed']:.0f} s); each makes 3–8 catalog calls (half "
             "`search_catalog`, a third `get_product`, the rest `lookup_catalog` of 3 ids) with 0.3–1.5 s of thought "
             f"between calls, queries ({len(QUERIES)}) and products ({len(POPULAR)}) drawn on a Zipf curve (s = 1.1: "
             "a few popular, a long tail); 40 % then build a cart (half of them change it), and 40 % of those check "
             "out (address, a shipping option, complete with `bacs`: a real order). Every "
             f"{WEBHOOK_EVERY:g} s the merchant changes a product's price (a popular one more often: the same Zipf "
             "curve), saved through WooCommerce's own PHP (`bench/store_load.php`, outside the web workers), and "
             "the store's signed `product.updated` webhook is delivered to the bridge. Freshness: every product "
             "price in every catalog answer is checked against the store's price history — an answer must not show "
             "a price replaced before the call was sent by a change whose webhook the bridge had already "
             "acknowledged, nor one replaced more than the TTL (60 s) before.\n")
    L.append("| calls | p50 ms | p99 ms | count |")
    L.append("|---|---:|---:|---:|")
    for kind in ("catalog", "cart", "checkout"):
        v = d["stats"][kind]
        L.append(f"| {kind} | {ms(percentile(v, 50))} | {ms(percentile(v, 99))} | {len(v)} |")
    L.append(f"| all | {ms(percentile(all_lat, 50))} | {ms(percentile(all_lat, 99))} | {len(all_lat)} |")
    L.append("")
    L.append("| measure | value |")
    L.append("|---|---:|")
    L.append(f"| store requests, all (catalog reads `S/products…`) | {d['requests']} ({d['catalog_requests']}) |")
    L.append(f"| store requests per catalog call | {per_call:.3f} |")
    L.append(f"| store requests per agent call, all | {d['requests'] / max(1, len(all_lat)):.3f} |")
    L.append(f"| store CPU seconds (PHP workers) | {d['cpu']:.1f} |")
    L.append(f"| orders placed | {d['orders']} |")
    L.append(f"| webhooks acknowledged / sent (slowest ack) | {d['hooks']['ok']} / {d['hooks']['sent']} "
             f"({d['hooks']['max_ack_s'] * 1000:.0f} ms) |")
    L.append(f"| catalog answers / prices checked | {fresh['answers']} / {fresh['checked']} |")
    L.append(f"| prices older than the webhook that changed them | {fresh['webhook']} |")
    L.append(f"| prices older than the TTL | {fresh['ttl']} |")
    L.append(f"| prices the store never had | {fresh['unknown']} |")
    failed = [f for f in d["failures"] if not f.startswith("stale")]
    shed = [f for f in failed if "temporarily unavailable" in f]
    L.append(f"| failed calls (of them refused with -32000 and a Retry-After: the store's capacity) | "
             f"{len(failed)} ({len(shed)}) |")
    m = d["metrics"]

    def total(name, **labels):
        return int(sum(v for k, v in m.items() if k.startswith(name) and
                       all(f'{a}="{b}"' in k for a, b in labels.items())))
    hits, misses = total("bcp_answer_cache_hits_total"), total("bcp_answer_cache_misses_total")
    L.append(f"| answer cache hits / misses (`/metrics`) | {hits} / {misses} |")
    L.append(f"| product cache hits / misses (`/metrics`) | {total('bcp_cache_hits_total')} / "
             f"{total('bcp_cache_misses_total')} |")
    L.append(f"| reads that joined one already in flight (`bcp_store_reads_shared_total`) | "
             f"{total('bcp_store_reads_shared_total')} |")
    L.append("")
    if control:
        c_lat = [x for v in control["stats"].values() for x in v]
        c_calls = control["calls"]["catalog"]
        c_metrics = control["metrics"]
        c_hits = int(sum(v for k, v in c_metrics.items() if k.startswith("bcp_answer_cache_hits_total")))
        c_misses = int(sum(v for k, v in c_metrics.items() if k.startswith("bcp_answer_cache_misses_total")))
        L.append("The same day again (same seeds: the same sessions and calls) on a fresh bridge **without the "
                 "webhooks** (prices unchanged), to tell the cost of the long tail from the cost of the "
                 "webhooks:\n")
        L.append("| day | store req. per catalog call | store requests, all | store CPU s | answer cache hits / misses "
                 "| catalog p50 / p99 ms | all p50 / p99 ms |")
        L.append("|---|---:|---:|---:|---:|---:|---:|")
        for label, x, xh, xm, lat in (("with a webhook every " + f"{WEBHOOK_EVERY:g} s", d, hits, misses, all_lat),
                                      ("without webhooks", control, c_hits, c_misses, c_lat)):
            cc = x["calls"]["catalog"]
            L.append(f"| {label} | {x['catalog_requests'] / max(1, cc):.3f} | {x['requests']} | {x['cpu']:.1f} | "
                     f"{xh} / {xm} | {ms(percentile(x['stats']['catalog'], 50))} / "
                     f"{ms(percentile(x['stats']['catalog'], 99))} | {ms(percentile(lat, 50))} / {ms(percentile(lat, 99))} |")
        L.append("")
    L.append("Store requests of the day by kind:\n")
    L.append("| request | count |")
    L.append("|---|---:|")
    for kind, count in sorted(d["kinds"].items(), key=lambda kv: -kv[1]):
        L.append(f"| {kind} | {count} |")
    L.append("")

    L.append("### One agent's journey, through the bridge and straight to the Store API (the floor)\n")
    L.append(f"search (`{JOURNEY_QUERY}`) → product → cart → checkout → address → option → complete (`bacs`, a real "
             f"order), {JOURNEYS} times each, alternating, on one bridge (the first bridge journey cold: nothing "
             "cached, no guest Nonce, no checkout schema). The floor is a minimal Store API client: "
             "`GET S/products?search=`, `GET S/products/{id}`, `GET S/cart` (its Cart-Token), `POST S/cart/add-item`, "
             "nothing for the checkout (the cart is it), `POST S/cart/update-customer`, "
             "`POST S/cart/select-shipping-rate`, `POST S/checkout`.\n")
    steps = ["search", "product", "cart", "checkout", "address", "option", "complete"]

    def step_ms(runs, name):
        return statistics.median(sum(t for s, t, _ in r["steps"] if s == name) for r in runs) * 1000

    def step_requests(runs, name):
        return statistics.median(sum(len(u) for s, _, u in r["steps"] if s == name) for r in runs)

    b_cold = [r for r in journey["bridge"] if r["cold"]]
    b_warm = [r for r in journey["bridge"] if not r["cold"]] or journey["bridge"]
    dr = journey["direct"]
    L.append("Per step: ms (store requests).\n")
    L.append("| | wall ms | store req. | store CPU s | " + " | ".join(steps) + " |")
    L.append("|---|---:|---:|---:|" + "---:|" * len(steps))
    for label, runs in (("bridge, cold (1st)", b_cold), (f"bridge, warm (median of {len(b_warm)})", b_warm),
                        (f"direct floor (median of {len(dr)})", dr)):
        if not runs:
            continue
        L.append(f"| {label} | {statistics.median(r['wall'] for r in runs) * 1000:.0f} | "
                 f"{statistics.median(r['requests'] for r in runs):g} | {statistics.median(r['cpu'] for r in runs):.2f} | "
                 + " | ".join(f"{step_ms(runs, s):.0f} ({step_requests(runs, s):g})" for s in steps) + " |")
    L.append("")
    floor_wall = statistics.median(r["wall"] for r in dr)
    floor_req = statistics.median(r["requests"] for r in dr)
    warm_wall = statistics.median(r["wall"] for r in b_warm)
    warm_req = statistics.median(r["requests"] for r in b_warm)
    cold_req = b_cold[0]["requests"] if b_cold else warm_req
    sample = b_warm[len(b_warm) // 2]
    L.append("Store requests of one warm bridge journey, by step: " + "; ".join(
        f"{name}: " + (", ".join(f"`{u.replace(STORE_API, 'S')}`" for u in uris) or "none")
        for name, _, uris in sample["steps"]) + ".\n")

    L.append("### Targets (issue 39)\n")
    L.append("| target | measured | |")
    L.append("|---|---|---|")
    worst = max(stampedes, key=lambda s: s["p99"] / s["lone_s"])
    L.append(f"| stampede: 1 store request per distinct read in flight | "
             + ", ".join(f"{s['requests']} for {s['n']} × {s['label'].split()[0]} (lone {s['lone_requests']})"
                         for s in stampedes)
             + f" | {mark(all(s['requests'] <= s['lone_requests'] for s in stampedes))} |")
    L.append(f"| stampede: agent p99 ≤ 1.5× a lone call | worst {worst['p99'] / worst['lone_s']:.2f}× "
             f"({worst['n']} × {worst['label'].split()[0]}) | {mark(all(s['p99'] <= 1.5 * s['lone_s'] for s in stampedes))} |")
    L.append(f"| day: ≤ 0.1 store requests per catalog call | {per_call:.3f} | {mark(per_call <= 0.1)} |")
    L.append(f"| day: no answer older than the TTL | {fresh['ttl']} of {fresh['checked']} | {mark(fresh['ttl'] == 0)} |")
    L.append(f"| day: none older than the webhook that changed it | {fresh['webhook']} of {fresh['checked']} | "
             f"{mark(fresh['webhook'] == 0)} |")
    L.append(f"| journey: ≤ 1.1× the direct floor's wall time | {warm_wall / floor_wall:.2f}× warm "
             f"({warm_wall * 1000:.0f} / {floor_wall * 1000:.0f} ms) | {mark(warm_wall <= 1.1 * floor_wall)} |")
    L.append(f"| journey: no more store requests than the floor | {warm_req:g} warm, {cold_req} cold / {floor_req:g} | "
             f"{mark(warm_req <= floor_req)} |")
    L.append("")
    L.append("<!-- STORELOAD:NOTES -->")
    L.append("<!-- STORELOAD:END -->\n")
    section = "\n".join(L)
    text = open(OUT).read() if os.path.exists(OUT) else "# Benchmarks\n"
    # Hand-written analysis of the last run, between NOTES and END, survives a re-run.
    old = re.search(r"<!-- STORELOAD:NOTES -->\n(.*?)<!-- STORELOAD:END -->", text, flags=re.S)
    if old:
        section = section.replace("<!-- STORELOAD:NOTES -->\n", "<!-- STORELOAD:NOTES -->\n" + old.group(1))
    pattern = re.compile(r"<!-- STORELOAD:BEGIN.*?<!-- STORELOAD:END -->\n", flags=re.S)
    text = pattern.sub(lambda _: section, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + section
    open(OUT, "w").write(text)
    print(section)
    if d["failures"]:
        print("failures (stale answers first; first 10):",
              *sorted(d["failures"], key=lambda f: not f.startswith("stale"))[:10], sep="\n  ")


if __name__ == "__main__":
    main()
