"""The churn half of bench/soak.sh: carts created and replaced, and signed product webhooks,
at a steady rate for the soak's whole duration, beside the load generators' catalog reads.

usage: soak_churn.py BRIDGE_URL WEBHOOK_SECRET SECONDS KEEP_CART_ID OUT_JSON
Writes {"creates", "updates", "webhooks", "errors", "first_error"} to OUT_JSON when done.
"""

import base64
import hashlib
import hmac
import http.client
import json
import random
import sys
import time
import urllib.parse

url, secret, seconds, keep_cart, out = sys.argv[1:6]
seconds = float(seconds)
parsed = urllib.parse.urlparse(url)
META = {"ucp-agent": {"profile": "https://agent.example/profile.json"}}
ITEMS = ["item_123", "item_456"]
# Product ids of the embedded sample store (src/platform/sample/store.json).
PRODUCTS = ["prod_abc123", "prod_def456", "prod_moka_pot", "prod_electric_kettle", "prod_red_tshirt", "prod_blue_jeans"]

tally = {"creates": 0, "updates": 0, "webhooks": 0, "errors": 0, "first_error": None}
connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)


def post(path, body, headers):
    global connection
    for attempt in range(2):
        try:
            connection.request("POST", path, body=body, headers=headers)
            response = connection.getresponse()
            return response.status, response.read()
        except (http.client.HTTPException, OSError):
            connection.close()
            connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)
            if attempt:
                raise
    raise RuntimeError("unreachable")


def call(tool, arguments):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": tool, "arguments": {"meta": META, **arguments}}})
    status, raw = post(parsed.path, body, {"content-type": "application/json",
                                           "accept": "application/json, text/event-stream"})
    reply = json.loads(raw) if status == 200 else {}
    result = reply.get("result", {})
    if status != 200 or result.get("isError"):
        tally["errors"] += 1
        tally["first_error"] = tally["first_error"] or f"{tool}: HTTP {status} {raw[:200]!r}"
        return None
    return result.get("structuredContent", {})


def lines():
    chosen = random.sample(ITEMS, random.randint(1, len(ITEMS)))
    return [{"item": {"id": item}, "quantity": random.randint(1, 3)} for item in chosen]


def webhook():
    body = json.dumps({"id": random.choice(PRODUCTS)}).encode()
    signature = base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()
    status, raw = post("/webhooks/woocommerce", body, {"content-type": "application/json",
                                                       "x-wc-webhook-signature": signature})
    if status != 200:
        tally["errors"] += 1
        tally["first_error"] = tally["first_error"] or f"webhook: HTTP {status} {raw[:200]!r}"
    tally["webhooks"] += 1


recent = []
deadline = time.monotonic() + seconds
tick = 0
while time.monotonic() < deadline:
    tick += 1
    created = call("create_cart", {"cart": {"line_items": lines()}})
    tally["creates"] += 1
    if created and created.get("id"):
        recent = (recent + [created["id"]])[-50:]
    if recent:
        call("update_cart", {"id": random.choice(recent), "cart": {"line_items": lines()}})
        tally["updates"] += 1
    if tick % 2 == 0:
        webhook()
    if tick % 100 == 0:
        # Keeps the load generators' get_cart target alive past the cart TTL.
        call("update_cart", {"id": keep_cart, "cart": {"line_items": [{"item": {"id": "item_123"}, "quantity": 1}]}})
    time.sleep(0.2)

json.dump(tally, open(out, "w"))
