#!/usr/bin/env bash
# The official UCP conformance suite (Universal-Commerce-Protocol/conformance, REST binding,
# release 2026-04-08) against the bridge on the sample store.
#
# The suite's code is read where it is kept (../shared/upstream/ucp-conformance, or
# UCP_CONFORMANCE_SUITE), never copied or changed; it runs from a scratch directory. Its Python
# dependencies come pinned from PyPI into a venv kept under target/ucp-suite. The bridge runs
# `demo --protocol ucp`; the suite reads only the root profile's version and takes the first
# shopping service as its REST endpoint, so it talks to .ci/conformance/profile_at.py, which
# serves the bridge's 2026-04-08 leaf as the root with the REST binding first and relays the
# rest unchanged. .ci/ucp-suite/data maps the suite's expectations onto the sample store
# (item, price in BRL, out-of-stock and unknown ids, discount code, test payment handlers).
#
# Every test must pass or be skipped by the suite itself, except those listed in
# .ci/ucp-suite/expected-failures.txt (each with its reason: they assume the reference flower
# shop, not the protocol). A listed test that passes fails the run too, so the list stays true.
#
#   .ci/ucp-suite.sh             install, then run in a network namespace with loopback only
#   .ci/ucp-suite.sh --install   install only (.ci/conformance.sh, before its namespace)
#   .ci/ucp-suite.sh --offline   run only (already inside a loopback-only namespace)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SUITE=${UCP_CONFORMANCE_SUITE:-$ROOT/../shared/upstream/ucp-conformance}
VENV=$ROOT/target/ucp-suite/venv
OUT=$ROOT/target/ucp-suite/run
BIN=${BCP_BRIDGE_BIN:-$ROOT/target/release/bcp-bridge}
DATA=$ROOT/.ci/ucp-suite/data
EXPECTED=$ROOT/.ci/ucp-suite/expected-failures.txt
PACKAGES="ucp-sdk==0.4.3 absl-py==2.5.1 httpx==0.29.0 pydantic==2.14.4 fastapi==0.165.0 uvicorn==0.55.0"

install() {
    if [ "$(cat "$VENV/.installed" 2>/dev/null)" != "$PACKAGES" ]; then
        echo "== pip install $PACKAGES"
        rm -rf "$VENV"
        python3 -m venv "$VENV"
        # shellcheck disable=SC2086
        "$VENV/bin/pip" install --quiet $PACKAGES
        echo "$PACKAGES" >"$VENV/.installed"
    fi
}

free_port() {
    python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"
}

wait_http() {
    for _ in $(seq 1 100); do
        python3 -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)" "$1" \
            2>/dev/null && return 0
        sleep 0.1
    done
    echo "nothing answers $1"
    return 1
}

PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}

run_suite() {
    [ -f "$SUITE/integration_test_utils.py" ] || { echo "no UCP conformance suite at $SUITE"; return 1; }
    [ -x "$BIN" ] || { echo "no bridge binary at $BIN (BCP_BRIDGE_BIN)"; return 1; }
    ip link set lo up 2>/dev/null || true
    rm -rf "$OUT" && mkdir -p "$OUT/scratch" "$OUT/results"
    trap cleanup EXIT

    "$BIN" demo --listen 127.0.0.1:0 --protocol ucp >"$OUT/bridge.log" 2>"$OUT/bridge.stderr" &
    PIDS+=($!)
    for _ in $(seq 1 100); do
        grep -q '^Try it' "$OUT/bridge.log" 2>/dev/null && break
        sleep 0.1
    done
    local bridge
    bridge=$(sed -nE 's/^bcp-bridge listening on (.*)$/http:\/\/\1/p' "$OUT/bridge.log")
    [ -n "$bridge" ] || { echo "bridge did not start:"; cat "$OUT/bridge.log" "$OUT/bridge.stderr"; return 1; }

    local front_port
    front_port=$(free_port)
    PROFILE_REST_FIRST=1 python3 "$ROOT/.ci/conformance/profile_at.py" "$front_port" "$bridge" 2026-04-08 &
    PIDS+=($!)
    local front=http://127.0.0.1:$front_port
    wait_http "$front/.well-known/ucp"

    # Each test program starts its own mock agent-profile and webhook servers on these ports.
    local agent_port webhook_port
    agent_port=$(free_port)
    webhook_port=$(free_port)
    local program name
    for program in "$SUITE"/*_test.py; do
        name=$(basename "$program" .py)
        echo "-- $name"
        (cd "$OUT/scratch" && PYTHONDONTWRITEBYTECODE=1 "$VENV/bin/python" "$program" \
            --server_url="$front" \
            --conformance_input="$DATA/conformance_input.json" \
            --fixture_config="$DATA/test_fixtures.json" \
            --test_data_dir="$DATA" \
            --simulation_secret=not-a-secret-loopback-only \
            --mock_agent_port="$agent_port" --mock_webhook_port="$webhook_port" \
            --xml_output_file="$OUT/results/$name.xml") >"$OUT/$name.log" 2>&1 || true
    done
    "$VENV/bin/python" "$ROOT/.ci/ucp-suite/verdict.py" "$OUT/results" "$EXPECTED" "$OUT"
}

case "${1:-}" in
    --install) install ;;
    --offline) run_suite ;;
    *)
        install
        # The suite's mock agent and webhook servers listen on every interface; in a network
        # namespace of their own that is loopback alone. CONFORMANCE_NETNS=0 runs without one.
        if [ "${CONFORMANCE_NETNS:-1}" = 0 ]; then
            run_suite
        elif unshare -n true 2>/dev/null; then
            exec unshare -n bash "$ROOT/.ci/ucp-suite.sh" --offline
        else
            echo "no network namespace (unshare -n); CONFORMANCE_NETNS=0 runs without one"
            exit 1
        fi
        ;;
esac
