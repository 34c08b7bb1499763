#!/usr/bin/env bash
# deploy/observability/ against real tools: `promtool check rules` and `promtool test rules`
# (every alert fires from recorded series), then Debian's Prometheus scraping a running
# bridge: the target is up and a bridge metric is queryable. The bridge takes a bearer token,
# so `/metrics` does too (issue 35): Prometheus scrapes with the token from a file, as a
# deployment with `[access] bearer_token_sha256` must; without it the scrape gets 401. The
# dashboard's queries are checked against the real /metrics by `cargo test`
# (tests/suite/observability.rs).
# Installs prometheus when missing (idempotent). Uses the debug binary `cargo test` built.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${CARGO_TARGET_DIR:-$PWD/target}
WORK=$TARGET/observability
BIN=${BCP_BRIDGE_BIN:-$TARGET/debug/bcp-bridge}
rm -rf "$WORK" && mkdir -p "$WORK"

if ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1; then
    echo "== installing prometheus"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus
fi
prometheus --version 2>&1 | head -1

echo "== promtool check rules / test rules"
promtool check rules deploy/observability/alerts.yaml
(cd deploy/observability && promtool test rules alerts.test.yaml)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
bridge_port=$(free_port)
prom_port=$(free_port)
pids=()
# Only the processes started here, by their ids.
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

echo "== a bridge (sample store, bearer token) on 127.0.0.1:$bridge_port, scraped by Prometheus on 127.0.0.1:$prom_port"
[ -x "$BIN" ] || { echo "no bridge binary at $BIN (run cargo test first)"; exit 1; }
# A token made for this run; the bridge's file holds only its SHA-256.
token=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
printf %s "$token" >"$WORK/metrics.token"
chmod 600 "$WORK/metrics.token"
cat >"$WORK/bridge.toml" <<TOML
[negotiation]
enabled = false

[access]
bearer_token_sha256 = ["$(printf %s "$token" | sha256sum | cut -d' ' -f1)"]
TOML
"$BIN" serve --config "$WORK/bridge.toml" --listen "127.0.0.1:$bridge_port" >"$WORK/bridge.out" 2>"$WORK/bridge.log" &
pids+=($!)
for _ in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$bridge_port/healthz" >/dev/null 2>&1 && break
    sleep 0.1
done
unauthorized=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$bridge_port/metrics")
[ "$unauthorized" = 401 ] || { echo "/metrics without the token answered $unauthorized, not 401"; exit 1; }
echo "-- /metrics without the token: 401"
# One tool call, so the tool metrics have a series.
curl -fsS "http://127.0.0.1:$bridge_port/bcp/mcp" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H "Authorization: Bearer $token" \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_catalog","arguments":{"meta":{"ucp-agent":{"profile":"https://agent.example/profile.json"}},"catalog":{"query":"shoes"}}}}' >/dev/null

cat >"$WORK/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $PWD/deploy/observability/alerts.yaml
scrape_configs:
  - job_name: bcp-bridge
    authorization:
      type: Bearer
      credentials_file: $WORK/metrics.token
    static_configs:
      - targets: ["127.0.0.1:$bridge_port"]
YAML
promtool check config "$WORK/prometheus.yml"
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
    --web.listen-address="127.0.0.1:$prom_port" >"$WORK/prometheus.log" 2>&1 &
pids+=($!)

query() { curl -fsS "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode "query=$1" 2>/dev/null || true; }
up=0
for _ in $(seq 1 60); do
    if query 'up{job="bcp-bridge"}' | grep -q '"value":\[[0-9.]*,"1"\]' &&
        query 'sum(bcp_tool_calls_total{tool="search_catalog"})' | grep -q '"value":\[[0-9.]*,"1"\]'; then
        up=1
        break
    fi
    sleep 1
done
if [ "$up" != 1 ]; then
    echo "Prometheus did not see the bridge up with bcp_tool_calls_total:"
    curl -fsS "http://127.0.0.1:$prom_port/api/v1/targets" || true
    tail -20 "$WORK/prometheus.log"
    exit 1
fi
echo "-- target up; bcp_tool_calls_total{tool=\"search_catalog\"} = 1 in Prometheus"
rules=$(curl -fsS "http://127.0.0.1:$prom_port/api/v1/rules" | python3 -c 'import json,sys; print(sum(len(g["rules"]) for g in json.load(sys.stdin)["data"]["groups"]))')
echo "-- Prometheus loaded $rules alerting rules from deploy/observability/alerts.yaml"
echo "observability: ok"
