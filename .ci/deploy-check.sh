#!/usr/bin/env bash
# Deployment files (Dockerfile, deploy/): everything this machine can check without a container
# engine or a cluster. Installs what it needs (idempotent), runs every check even after a
# failure, and exits non-zero if any failed. Run as root (apt-get, chroot, network namespace).
#   bash .ci/deploy-check.sh
# BCP_DEPLOY_TOOLS overrides where the Python tools are cached.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
WORK=$TARGET/deploy-check
TOOLS=${BCP_DEPLOY_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/bcp-bridge/deploy-tools-$(sha256sum .ci/deploy/requirements.txt | cut -c1-12)}
HELPERS=$ROOT/.ci/deploy
export PYTHONPATH=$HELPERS
mkdir -p "$WORK"

started=$(date +%s)
passed=0
failed=0
failures=()

# run NAME COMMAND...: one check, timed; a failure is counted and the next check still runs.
run() {
    local name=$1 start end
    shift
    echo "== ${name}"
    start=$(date +%s%N)
    if "$@"; then
        passed=$((passed + 1))
        end=$(date +%s%N)
        echo "-- ${name}: ok ($(((end - start) / 1000000)) ms)"
    else
        failed=$((failed + 1))
        failures+=("$name")
        end=$(date +%s%N)
        echo "-- ${name}: FAILED ($(((end - start) / 1000000)) ms)"
    fi
}

# Validators get no network at all when a private network namespace can be made: proof that
# the schemas they use ship inside the packages.
offline() {
    if unshare --net true 2>/dev/null; then
        unshare --net "$@"
    else
        "$@"
    fi
}

echo "== tools"
tools_start=$(date +%s)
missing=()
for tool in redis-server:redis-server redis-cli:redis-tools curl:curl ip:iproute2 \
    systemd-analyze:systemd unshare:util-linux chroot:coreutils ldd:libc-bin; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool#*:}")
done
python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ ! -x "$TOOLS/bin/hadolint" ] || [ ! -f "$TOOLS/compose_spec.json" ]; then
    rm -rf "$TOOLS"
    python3 -m venv "$TOOLS"
    "$TOOLS/bin/pip" install --quiet --disable-pip-version-check -r .ci/deploy/requirements.txt
    # The Compose Specification's JSON schema, as the last docker-compose package ships it.
    "$TOOLS/bin/pip" download --quiet --disable-pip-version-check --no-deps -d "$TOOLS/dl" docker-compose==1.29.2
    "$TOOLS/bin/python" - "$TOOLS" <<'EOF'
import sys, zipfile, pathlib
tools = pathlib.Path(sys.argv[1])
wheel = next((tools / "dl").glob("docker_compose-*.whl"))
(tools / "compose_spec.json").write_bytes(zipfile.ZipFile(wheel).read("compose/config/compose_spec.json"))
EOF
fi
PY=$TOOLS/bin/python
echo "-- tools ready in $TOOLS ($(($(date +%s) - tools_start)) s)"

mapfile -t manifests < <(find deploy/kubernetes -name '*.yaml' ! -name kustomization.yaml | sort)

run "yamllint" "$TOOLS/bin/yamllint" --strict -c .ci/deploy/yamllint.yaml deploy .ci/deploy/yamllint.yaml

kubernetes_schemas() {
    local version
    # The oldest and the newest release the package bundles that these manifests target.
    for version in 1.30.0 1.37.0; do
        offline "$TOOLS/bin/kubernetes-validate" --strict --quiet -k "$version" "${manifests[@]}" || return 1
        echo "${#manifests[@]} files valid against the Kubernetes $version schemas (strict: no unknown fields)"
    done
}
run "kubernetes schemas" kubernetes_schemas

compose_schema() {
    offline "$TOOLS/bin/check-jsonschema" --schemafile "$TOOLS/compose_spec.json" deploy/compose.yaml &&
        offline "$PY" -c '
import sys
from compose_spec import PyCompose
compose = PyCompose.from_yaml(open("deploy/compose.yaml").read())
print("compose_spec parser: services", ", ".join(compose.service_names()))'
}
run "compose schema" compose_schema

run "hadolint" offline "$TOOLS/bin/hadolint" --failure-threshold info Dockerfile
run "Dockerfile properties" "$PY" "$HELPERS/lint_dockerfile.py" "$ROOT"
run "manifests agree" "$PY" "$HELPERS/check_manifests.py" "$ROOT" "$WORK/configs"

systemd_unit() {
    # verify needs the unit's programs and files to exist: point it at stand-ins.
    local dir=$WORK/systemd
    rm -rf "$dir" && mkdir -p "$dir"
    printf '#!/bin/sh\n' >"$dir/bcp-bridge" && chmod +x "$dir/bcp-bridge" && touch "$dir/bridge.env"
    sed -e "s#/usr/local/bin/bcp-bridge#$dir/bcp-bridge#g" -e "s#/etc/bcp-bridge/bridge.env#$dir/bridge.env#" \
        deploy/systemd/bcp-bridge.service >"$dir/bcp-bridge.service"
    local out
    out=$(systemd-analyze verify --man=no "$dir/bcp-bridge.service" 2>&1) || { echo "$out"; return 1; }
    # verify only warns about unknown keys: any output is a failure.
    [ -z "$out" ] || { echo "$out"; return 1; }
    # Exposure is reported on a 0-10 scale; the threshold is in tenths of it.
    systemd-analyze security --offline=true --threshold=20 "$dir/bcp-bridge.service" | tail -1
}
run "systemd unit" systemd_unit

# The binary from exactly the files the Dockerfile's build stage copies (and .dockerignore
# lets through), with its stub benches: proof the image's context is enough to build.
BIN=$WORK/context/target-bin/bcp-bridge
build_from_context() {
    local context=$WORK/context/src
    mkdir -p "$context"
    "$PY" "$HELPERS/context.py" "$ROOT" "$context" || return 1
    (cd "$context" && CARGO_TARGET_DIR=$TARGET cargo build --release --locked --bin bcp-bridge --quiet) || return 1
    mkdir -p "$(dirname "$BIN")" && cp "$TARGET/release/bcp-bridge" "$BIN"
    ls -l "$BIN"
}
run "release build from the image's context" build_from_context

configs_check() {
    local config variables ok=0
    [ -x "$BIN" ] || { echo "no binary"; return 1; }
    for config in "$WORK"/configs/*.toml; do
        # Only the variables the container, pod or unit would get.
        mapfile -t variables < <(grep -v '^#' "${config%.toml}.env")
        env -i PATH=/usr/bin:/bin "${variables[@]}" "$BIN" check --config "$config" || ok=1
    done
    return $ok
}
run "bcp-bridge check on every shipped config" configs_check

run_like_image() {
    [ -x "$BIN" ] || { echo "no binary"; return 1; }
    if unshare --net true 2>/dev/null; then
        unshare --net "$PY" "$HELPERS/run_like_image.py" "$ROOT" "$BIN" "$WORK/run"
    else
        echo "(no private network namespace here: using a free loopback port)"
        "$PY" "$HELPERS/run_like_image.py" "$ROOT" "$BIN" "$WORK/run" --shared-network
    fi
}
run "release binary run as the image runs it" run_like_image

echo
echo "Not checked here (no container engine, no cluster, no systemd as PID 1): docker build,"
echo "the HEALTHCHECK under Docker, docker compose up, kubectl apply, the unit under systemd."
echo "deploy-check took $(($(date +%s) - started)) s"
if [ "$failed" -gt 0 ]; then
    echo "failed: ${failures[*]}"
fi
echo "deploy-check: ${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
