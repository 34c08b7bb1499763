"""The client of bench/store_load.sh (issue 39 item 4): agents against the bridge in front of a real
WooCommerce, beside the same requests sent straight to its Store API; writes the STORELOAD section
of BENCHMARKS.md. Standard library only: the kit (store_load_kit.py) and the phases
(store_load_phases.py) sit beside it.
"""

from store_load_kit import *  # noqa: F401,F403
from store_load_phases import *  # noqa: F401,F403

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
