#!/usr/bin/env bash
# First try with stock MCP clients (issue 11): clients that send NO meta at all complete
# search -> get_product -> create_cart against `serve` with `[agents] default_profile` set,
# negotiation on, and the default profile served from loopback:
#   1. the Python MCP SDK over streamable HTTP;
#   2. the MCP Inspector CLI over HTTP (three tools/call, each fed by the previous answer);
#   3. the Python MCP SDK over stdio through `mcp-remote` (stdio <-> HTTP), as Claude
#      Desktop runs it (docs/agents/mcp-clients.md);
#   4. the Inspector CLI in stdio mode running `mcp-remote` with a bearer token header,
#      against a bridge that requires one.
# Tools come pinned from the npm registry and PyPI into target/client-tools (kept between
# runs); then everything runs in a network namespace with loopback only where the machine
# allows one (`unshare -n`), like .ci/conformance.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TOOLS=${CLIENT_TOOLS:-$ROOT/target/client-tools}
OUT=$ROOT/target/first-try
BIN=${BCP_BRIDGE_BIN:-$ROOT/target/release/bcp-bridge}

MCP_REMOTE=mcp-remote@0.15.1
MCP_INSPECTOR=@modelcontextprotocol/inspector@2.12.0
PY_MCP=mcp==2.3.0

install_tools() {
    mkdir -p "$TOOLS/npm"
    local want="$MCP_REMOTE $MCP_INSPECTOR"
    if [ ! -f "$TOOLS/npm/.installed" ] || [ "$(cat "$TOOLS/npm/.installed")" != "$want" ]; then
        echo "== npm install $want"
        # shellcheck disable=SC2086 # one word per package
        (cd "$TOOLS/npm" && npm install --no-audit --no-fund --loglevel=error $want)
        echo "$want" >"$TOOLS/npm/.installed"
    fi
    if [ ! -x "$TOOLS/venv/bin/python" ] \
        || ! "$TOOLS/venv/bin/pip" show mcp 2>/dev/null | grep -q "^Version: ${PY_MCP#*==}$"; then
        echo "== pip install $PY_MCP"
        python3 -m venv "$TOOLS/venv"
        "$TOOLS/venv/bin/pip" install --quiet "$PY_MCP"
    fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
}
trap cleanup EXIT

# The agent profile the bridge falls back to, served from loopback like any agent's.
start_profile_host() {
    mkdir -p "$OUT/agent/.well-known"
    echo '{"ucp": {"version": "2026-07-28"}, "name": "first-try default agent"}' \
        >"$OUT/agent/.well-known/ucp"
    PROFILE_PORT=$(free_port)
    python3 -m http.server "$PROFILE_PORT" --bind 127.0.0.1 --directory "$OUT/agent" \
        >"$OUT/profile-host.log" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 1 50); do
        python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' \
            "http://127.0.0.1:$PROFILE_PORT/.well-known/ucp" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "profile host did not start"; cat "$OUT/profile-host.log"; return 1
}

# Starts `serve` with the config in $1 (name $2); sets MCP_URL.
start_bridge() {
    local config=$1 name=$2
    "$BIN" serve --config "$config" >"$OUT/bridge-$name.log" 2>"$OUT/bridge-$name.stderr" &
    PIDS+=($!)
    for _ in $(seq 1 100); do
        grep -q '^MCP endpoint: ' "$OUT/bridge-$name.log" 2>/dev/null && break
        sleep 0.1
    done
    MCP_URL=$(sed -nE 's/^MCP endpoint: (.*)$/\1/p' "$OUT/bridge-$name.log")
    if [ -z "$MCP_URL" ]; then
        echo "bridge $name did not start:"; cat "$OUT/bridge-$name.log" "$OUT/bridge-$name.stderr"
        return 1
    fi
}

write_config() {
    local port=$1 extra=${2:-}
    cat <<TOML
[server]
listen = "127.0.0.1:$port"

[store]
platform = "sample"

[negotiation]
enabled = true
allow_http_hosts = ["127.0.0.1"]
allow_private_hosts = ["127.0.0.1"]

[agents]
default_profile = "http://127.0.0.1:$PROFILE_PORT/.well-known/ucp"
$extra
TOML
}

FAILED=()
check() {
    local name=$1; shift
    echo "== $name"
    if "$@" >"$OUT/$name.log" 2>&1; then
        tail -n 3 "$OUT/$name.log"
        echo "-- $name: ok"
    else
        cat "$OUT/$name.log"
        echo "-- $name: FAILED"
        FAILED+=("$name")
    fi
}

INSPECTOR=()
SERVER=()
# One tools/call through the Inspector CLI (options INSPECTOR, server SERVER); prints
# structuredContent. Fails on an error or
# when the answer does not say it was served as the default profile.
inspector_call() {
    local tool=$1 arg=$2 reply
    reply=$("${INSPECTOR[@]}" --method tools/call --tool-name "$tool" --tool-arg "$arg" \
        -- "${SERVER[@]}")
    python3 - "$tool" "$reply" <<'PY'
import json, sys
tool, reply = sys.argv[1], json.loads(sys.argv[2])
if reply.get("isError"):
    sys.exit(f"{tool} failed: {reply}")
answer = reply.get("structuredContent") or json.loads(reply["content"][0]["text"])
codes = [m.get("code") for m in answer.get("messages", [])]
if "default_profile" not in codes:
    sys.exit(f"{tool}: no default_profile notice: {codes}")
print(json.dumps(answer))
PY
}

# search -> get_product -> create_cart through the Inspector CLI set up in INSPECTOR/SERVER.
inspector_shop() {
    local found product variant cart
    found=$(inspector_call search_catalog 'catalog={"query":"running shoes"}')
    product=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["products"][0]["id"])' "$found")
    found=$(inspector_call get_product "catalog={\"id\":\"$product\"}")
    variant=$(python3 -c 'import json,sys; print(next(v["id"] for v in json.loads(sys.argv[1])["product"]["variants"] if v["availability"]["available"]))' "$found")
    cart=$(inspector_call create_cart "cart={\"line_items\":[{\"item\":{\"id\":\"$variant\"},\"quantity\":1}]}")
    python3 - "$cart" <<'PY'
import json, sys
cart = json.loads(sys.argv[1])
assert cart["line_items"][0]["quantity"] == 1, cart
assert cart["continue_url"], cart
print("cart", cart["id"], "continue_url", cart["continue_url"])
PY
}

inspector_http() {
    INSPECTOR=("$TOOLS/npm/node_modules/.bin/mcp-inspector" --cli --transport http)
    SERVER=("$1")
    inspector_shop
}

inspector_stdio_remote() {
    INSPECTOR=("$TOOLS/npm/node_modules/.bin/mcp-inspector" --cli --transport stdio)
    SERVER=("$TOOLS/npm/node_modules/.bin/mcp-remote" "$1" --transport http-only
        --header "Authorization: Bearer $2")
    inspector_shop
}

python_http() {
    "$TOOLS/venv/bin/python" "$ROOT/.ci/clients/first_try.py" http "$1"
}

python_stdio_remote() {
    "$TOOLS/venv/bin/python" "$ROOT/.ci/clients/first_try.py" stdio \
        "$TOOLS/npm/node_modules/.bin/mcp-remote" "$1" --transport http-only
}

run_checks() {
    rm -rf "$OUT" && mkdir -p "$OUT"
    ip link set lo up 2>/dev/null || true
    export NO_UPDATE_NOTIFIER=1 NPM_CONFIG_UPDATE_NOTIFIER=false
    # mcp-remote keeps OAuth state here; a fresh one per run.
    export MCP_REMOTE_CONFIG_DIR="$OUT/mcp-remote"
    start_profile_host

    write_config "$(free_port)" >"$OUT/open.toml"
    start_bridge "$OUT/open.toml" open
    check python-sdk-http python_http "$MCP_URL"
    check inspector-cli-http inspector_http "$MCP_URL"
    check python-sdk-stdio-mcp-remote python_stdio_remote "$MCP_URL"

    local token=first-try-token digest
    digest=$(printf %s "$token" | sha256sum | cut -d' ' -f1)
    write_config "$(free_port)" "[access]
bearer_token_sha256 = [\"$digest\"]" >"$OUT/bearer.toml"
    start_bridge "$OUT/bearer.toml" bearer
    check inspector-cli-stdio-mcp-remote-bearer inspector_stdio_remote "$MCP_URL" "$token"

    if [ ${#FAILED[@]} -gt 0 ]; then
        echo "first-try clients FAILED: ${FAILED[*]}"
        return 1
    fi
    echo "first-try clients: all green"
}

if [ "${1:-}" = "--offline" ]; then
    run_checks
    exit $?
fi

install_tools
if [ -z "${BCP_BRIDGE_BIN:-}" ]; then
    echo "== cargo build --release"
    cargo build --release --locked --quiet
fi
if [ "${CONFORMANCE_NETNS:-1}" = 1 ] && unshare -n true 2>/dev/null; then
    echo "== running in a network namespace with loopback only"
    exec unshare -n bash "$ROOT/.ci/first-try.sh" --offline
fi
run_checks
