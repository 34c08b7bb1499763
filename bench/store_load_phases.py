"""The three phases of bench/store_load.py: the stampede, one agent's journey beside the
direct floor, and a day in miniature with webhooks and freshness checks."""

from store_load_kit import *  # noqa: F401,F403 (the knobs, the store, the clients)

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
