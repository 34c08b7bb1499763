# bcp-bridge container image.
#   docker build -t bcp-bridge .
#   docker run --rm -p 8080:8080 \
#     -v "$PWD/deploy/bridge.toml:/etc/bcp-bridge/bridge.toml:ro" \
#     --env-file deploy/bridge.env bcp-bridge
# The configuration is mounted (never baked in); secrets come from the environment through
# `{ env = "NAME" }` in the file. See deploy/README.md.
# .ci/deploy-check.sh lints this file and runs the release binary the way this image does.

ARG RUST_IMAGE=rust:1.95.0-slim-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${RUST_IMAGE} AS build
WORKDIR /src

# Dependencies first, in their own layer: it is rebuilt only when Cargo.toml or Cargo.lock
# change, not on every source edit. The stubs only satisfy the manifest's targets.
COPY Cargo.toml Cargo.lock ./
RUN mkdir -p src benches \
    && echo 'fn main() {}' > src/main.rs \
    && touch src/lib.rs \
    && for bench in brain baseline_axum baseline_rmcp loadgen; do echo 'fn main() {}' > "benches/${bench}.rs"; done \
    && cargo build --profile dist --locked --bin bcp-bridge \
    && rm -rf src

# Only what the binary is compiled from: the Shopify GraphQL documents and the taxonomy
# table are read at compile time; tests/, bench/ and config/ are not.
COPY src ./src
COPY graphql ./graphql
COPY mappings ./mappings
# COPY keeps the files' old mtimes; touching them makes cargo rebuild over the stub build.
RUN touch src/main.rs src/lib.rs \
    && cargo build --profile dist --locked --bin bcp-bridge \
    && install -D -m 0755 target/dist/bcp-bridge /out/bcp-bridge

FROM ${RUNTIME_IMAGE} AS runtime
# ca-certificates: agent-profile fetches and the store's API are https, verified against the
# system roots. Nothing else: the HEALTHCHECK is the binary itself (no curl).
# Versions are not pinned so that a rebuild picks up Debian security updates; the package
# lists and the downloaded .debs are removed in the same layer, so they never ship.
# useradd: a regular (not --system) account with an explicit uid, so no "uid outside the
# system range" warning; --no-log-init keeps a large uid from growing a sparse lastlog file.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb /var/log/apt /var/log/dpkg.log \
    && groupadd --gid 10001 bcp \
    && useradd --no-log-init --uid 10001 --gid bcp --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin bcp \
    && mkdir -p /etc/bcp-bridge

COPY --from=build /out/bcp-bridge /usr/local/bin/bcp-bridge

# Numeric, so Kubernetes can verify runAsNonRoot without reading /etc/passwd.
USER 10001:10001
# The bridge writes nothing to disk: the root filesystem can be mounted read-only.
WORKDIR /
EXPOSE 8080
STOPSIGNAL SIGTERM
# /healthz answers "ok" whenever the process serves HTTP; it does not call the store
# (that is /readyz). `healthcheck` reads the port (and TLS) from the mounted file, so the
# probe follows `server.listen`; a config mounted elsewhere needs this path changed too.
HEALTHCHECK --interval=15s --timeout=3s --start-period=5s --retries=3 \
    CMD ["/usr/local/bin/bcp-bridge", "healthcheck", "--config", "/etc/bcp-bridge/bridge.toml"]
ENTRYPOINT ["/usr/local/bin/bcp-bridge"]
CMD ["--log-json", "serve", "--config", "/etc/bcp-bridge/bridge.toml"]
