"""What bench/store_load.py stands on: its knobs, the store (access log, CPU, catalog), HTTP
clients, a bridge process of its own, and the Zipf draws. Standard library only.

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
