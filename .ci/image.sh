#!/usr/bin/env bash
# The container image, really built and really run (no container registry is reachable here):
#   1. base images made locally: the runtime base is Debian bookworm minbase (mmdebstrap); the
#      Rust build image is the same base + gcc, libc6-dev, ca-certificates + the host's 1.95.0
#      toolchain and CA bundle. Both are cached in buildah's store under a tag keyed by their
#      recipe, so a second run on the same machine reuses them.
#   2. the real Dockerfile built with buildah (layers on: the dependency layer is reused).
#   3. a second build with only src/ changed, timed: what a code change costs.
#   4. a container started from the image (buildah from + run, chroot isolation: podman run
#      cannot set rlimits here) with a mounted config and `{ env = … }` secrets: /healthz,
#      /readyz, the image's HEALTHCHECK, an MCP tools/call, nothing written outside /tmp,
#      SIGTERM exits 0.
# Run as root (apt-get, buildah). BCP_IMAGE_WORK overrides the scratch directory.
set -euo pipefail
# The body is one block, read whole before it runs: editing this file during a run (it takes
# minutes) cannot change what the run does.
{
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=${BCP_IMAGE_WORK:-${CARGO_TARGET_DIR:-$ROOT/target}/image}
IMAGE=localhost/bcp-bridge:ci
SUITE=bookworm
TOOLCHAIN=1.95.0
started=$(date +%s)
mkdir -p "$WORK"

missing=()
for tool in buildah:buildah mmdebstrap:mmdebstrap curl:curl; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" uidmap
fi

# image_exists NAME: whether buildah's local store holds NAME.
image_exists() { buildah inspect --type image "$1" >/dev/null 2>&1; }

# from_rootfs NAME TARBALL [buildah config options...]: an image whose only layer is TARBALL.
from_rootfs() {
    local name=$1 tarball=$2 container
    shift 2
    container=$(buildah from --pull=never scratch)
    buildah add --quiet "$container" "$tarball" / >/dev/null
    buildah config "$@" "$container"
    buildah commit --quiet --rm --format docker "$container" "$name" >/dev/null
}

SYSROOT=$(rustc "+$TOOLCHAIN" --print sysroot)
# The tags change when a recipe (bump its number when its block below changes) or the
# toolchain does; BCP_IMAGE_REFRESH=1 remakes them for Debian's updates (the runtime stage
# also runs apt-get itself, so a release build gets them either way).
RUNTIME_RECIPE=2
RUST_RECIPE=1
toolchain_id=$(rustc "+$TOOLCHAIN" -vV | sed -n 's/^commit-hash: //p' | cut -c1-12)
RUNTIME_IMAGE=localhost/bcp-base/debian:$SUITE-minbase-r$RUNTIME_RECIPE
RUST_IMAGE=localhost/bcp-base/rust:$TOOLCHAIN-$SUITE-r$RUST_RECIPE-$toolchain_id
[ "${BCP_IMAGE_REFRESH:-0}" = 1 ] && buildah rmi "$RUNTIME_IMAGE" "$RUST_IMAGE" >/dev/null 2>&1 || true

if ! image_exists "$RUNTIME_IMAGE"; then
    echo "== runtime base: mmdebstrap --variant=minbase $SUITE"
    t=$(date +%s)
    # Like debian:*-slim: no documentation, manual pages or translations, now or from the
    # runtime stage's apt-get later (the dpkg filter stays in the image).
    mmdebstrap --quiet --variant=minbase \
        --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
        --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
        "$SUITE" "$WORK/runtime-base.tar"
    from_rootfs "$RUNTIME_IMAGE" "$WORK/runtime-base.tar" \
        --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd /bin/bash
    rm -f "$WORK/runtime-base.tar"
    echo "-- $RUNTIME_IMAGE made in $(($(date +%s) - t)) s"
else
    echo "== runtime base: $RUNTIME_IMAGE (cached)"
fi

if ! image_exists "$RUST_IMAGE"; then
    echo "== Rust build image: minbase + gcc libc6-dev ca-certificates + the host's $TOOLCHAIN toolchain"
    t=$(date +%s)
    mmdebstrap --quiet --variant=minbase --include=ca-certificates,gcc,libc6-dev \
        "$SUITE" "$WORK/rust-base.tar"
    # The toolchain without its documentation (most of its size), at the rust image's paths.
    tar -C "$SYSROOT" --exclude=./share/doc --transform 's#^\.#usr/local/rustup/toolchain#' \
        -cf "$WORK/toolchain.tar" .
    container=$(buildah from --pull=never scratch)
    buildah add --quiet "$container" "$WORK/rust-base.tar" / >/dev/null
    buildah add --quiet "$container" "$WORK/toolchain.tar" / >/dev/null
    # The host's bundle: the crate registry is reached through whatever roots this host trusts.
    buildah copy --quiet "$container" /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt >/dev/null
    buildah config \
        --env PATH=/usr/local/rustup/toolchain/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        --env CARGO_HOME=/usr/local/cargo --env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
        --cmd /bin/bash "$container"
    buildah commit --quiet --rm --format docker "$container" "$RUST_IMAGE" >/dev/null
    rm -f "$WORK/rust-base.tar" "$WORK/toolchain.tar"
    echo "-- $RUST_IMAGE made in $(($(date +%s) - t)) s"
else
    echo "== Rust build image: $RUST_IMAGE (cached)"
fi

# The build context: exactly the files of this checkout the .dockerignore lets through,
# copied so that the second build can change src/ without touching the checkout.
CONTEXT=$WORK/context
rm -rf "$CONTEXT" && mkdir -p "$CONTEXT"
git ls-files -z --cached --others --exclude-standard -- Cargo.toml Cargo.lock src graphql mappings Dockerfile .dockerignore |
    xargs -0 cp --parents -t "$CONTEXT"

bud() {
    buildah bud --quiet --isolation chroot --layers --format docker --force-rm --pull=never \
        --build-arg "RUST_IMAGE=$RUST_IMAGE" --build-arg "RUNTIME_IMAGE=$RUNTIME_IMAGE" \
        -t "$IMAGE" "$CONTEXT" >/dev/null
}

echo "== buildah bud (the Dockerfile, layers cached)"
t=$(date +%s)
bud
first_build=$(($(date +%s) - t))
echo "-- built $IMAGE in ${first_build} s"

echo "== second build, only src/ changed"
printf '\n// image.sh rebuild %s\n' "$(date +%s%N)" >>"$CONTEXT/src/lib.rs"
t=$(date +%s)
bud
second_build=$(($(date +%s) - t))
echo "-- rebuilt in ${second_build} s (dependency layer reused)"

size=$(buildah images --format '{{.Size}}' "$IMAGE" | head -1)
echo "-- image size: $size"

echo "== the image, run"
python3 "$ROOT/.ci/image/run_image.py" "$IMAGE" "$WORK/run"

echo "image.sh: ok in $(($(date +%s) - started)) s (first build ${first_build} s, src-only rebuild ${second_build} s, image ${size})"
exit
}
