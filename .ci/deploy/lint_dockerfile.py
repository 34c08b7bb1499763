"""Docker-free checks of the properties the image promises (issue 12), beyond hadolint's rules.

Usage: python lint_dockerfile.py REPO_ROOT
"""

import fnmatch
import re
import sys
import tomllib
from pathlib import Path

import dockerfile as df

CONFIG_PATH = "/etc/bcp-bridge/bridge.toml"


def dockerignore_allows(patterns: list[str], path: str) -> bool:
    """Last matching pattern wins, as in Docker; a directory pattern covers its contents."""
    allowed = True
    for pattern in patterns:
        negate = pattern.startswith("!")
        body = pattern[1:] if negate else pattern
        body = body.rstrip("/")
        if fnmatch.fnmatch(path, body) or path.startswith(body + "/"):
            allowed = negate
    return allowed


def lint(root: Path) -> list[str]:
    problems: list[str] = []
    parsed = df.parse(root / "Dockerfile")
    stages = parsed.stages
    if len(stages) < 2:
        return ["not multi-stage: the runtime image must not carry the toolchain"]
    runtime = parsed.runtime
    build_names = {s.name for s in stages[:-1]}

    for stage in stages:
        name, tag = df.image_tag(stage.base)
        if tag is None or tag == "latest":
            problems.append(f"FROM {stage.base}: pin a tag (no implicit or explicit latest)")
        if stage.all("ADD"):
            problems.append("ADD used: COPY only (no remote URLs, no auto-extraction)")
    build = stages[0]
    if not build.base.startswith("rust:1.95"):
        problems.append(f"build stage FROM {build.base}: expected the Rust 1.95 image")
    if not runtime.base.startswith(("debian:bookworm-slim", "gcr.io/distroless/cc")):
        problems.append(f"runtime FROM {runtime.base}: expected debian:bookworm-slim or distroless cc")

    builds = [r.args for r in build.all("RUN") if "cargo build" in r.args]
    if not builds or not all("--profile dist" in b and "--locked" in b for b in builds):
        problems.append("cargo build must be --profile dist --locked (the shipped profile, the reviewed Cargo.lock)")
    if len(builds) < 2 or build.all("COPY")[0].args.split()[:2] != ["Cargo.toml", "Cargo.lock"]:
        problems.append("no dependency layer: COPY Cargo.toml Cargo.lock and build before the sources")

    # The stub layer must stub every target the manifest names, or cargo refuses the manifest.
    benches = re.findall(r'\[\[bench\]\]\s*name = "([^"]+)"', (root / "Cargo.toml").read_text())
    stub_run = builds[0] if builds else ""
    missing = [name for name in benches if name not in stub_run]
    if missing:
        problems.append(f"the dependency layer does not stub the benches {missing} of Cargo.toml")

    # Every build input exists and gets through .dockerignore.
    patterns = [
        line.strip()
        for line in (root / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    for excluded in ("target", ".git", "tests", "config"):
        if dockerignore_allows(patterns, excluded):
            problems.append(f".dockerignore lets {excluded}/ into the build context")
    for copy in build.all("COPY"):
        flags, sources, _ = df.copy_parts(copy)
        for source in sources:
            if not (root / source).exists():
                problems.append(f"line {copy.line}: COPY {source}: no such file")
            elif not dockerignore_allows(patterns, source):
                problems.append(f"line {copy.line}: COPY {source} is excluded by .dockerignore")

    # The runtime stage gets the binary and nothing else from anywhere.
    copies = runtime.all("COPY")
    binary = None
    if len(copies) != 1:
        problems.append(f"runtime stage has {len(copies)} COPY instructions; expected only the binary")
    for copy in copies:
        flags, sources, destination = df.copy_parts(copy)
        if flags.get("from") not in build_names or len(sources) != 1:
            problems.append(f"line {copy.line}: runtime COPY must take one file from a build stage")
        binary = destination

    user = runtime.last("USER")
    if user is None:
        problems.append("no USER in the runtime stage: it would run as root")
    else:
        uid, _, gid = user.args.partition(":")
        if not uid.isdigit() or int(uid) == 0 or (gid and (not gid.isdigit() or int(gid) == 0)):
            problems.append(f"USER {user.args}: must be a numeric non-root uid[:gid] (runAsNonRoot)")

    runs = " ".join(r.args for r in runtime.all("RUN"))
    # No package lists or downloaded .debs shipped in the runtime image.
    if "apt-get install" in runs and ("apt-get clean" not in runs or "/var/lib/apt/lists" not in runs):
        problems.append("runtime stage installs packages but does not apt-get clean and drop the lists")
    # useradd --system with an explicit uid above the system range warns on every build.
    if "useradd" in runs and "--system" in runs.split("useradd", 1)[1].split("&&", 1)[0]:
        problems.append("useradd --system with uid 10001 warns (outside SYS_UID_MAX): use a regular account")
    if "useradd" in runs and "--no-log-init" not in runs:
        problems.append("useradd without --no-log-init (a large uid grows a sparse lastlog)")
    if "ca-certificates" not in runs:
        problems.append("runtime stage lacks ca-certificates (https to the store and agent profiles)")

    health = runtime.last("HEALTHCHECK")
    if health is None:
        problems.append("no HEALTHCHECK")
    else:
        command = df.exec_form(health)
        # The binary's own probe reads the port from the config file the CMD serves.
        own_probe = command[:2] == [binary, "healthcheck"] and CONFIG_PATH in command
        if not own_probe and not any(part.endswith("/healthz") for part in command):
            problems.append("HEALTHCHECK does not probe /healthz")
        if command[0] not in runs and command[0] != binary:
            problems.append(f"HEALTHCHECK runs {command[0]}, which the runtime stage does not install")

    entrypoint, cmd = runtime.last("ENTRYPOINT"), runtime.last("CMD")
    if entrypoint is None or cmd is None:
        problems.append("ENTRYPOINT and CMD must both be set (exec form)")
    else:
        if df.exec_form(entrypoint) != [binary]:
            problems.append(f"ENTRYPOINT {entrypoint.args} is not the copied binary {binary}")
        args = df.exec_form(cmd)
        if "serve" not in args or CONFIG_PATH not in args:
            problems.append(f"CMD must serve --config {CONFIG_PATH}")

    listen = tomllib.loads((root / "deploy/bridge.toml").read_text())["server"]["listen"]
    port = listen.rsplit(":", 1)[1]
    exposed = [e.args for e in runtime.all("EXPOSE")]
    if exposed != [port]:
        problems.append(f"EXPOSE {exposed} differs from deploy/bridge.toml's listen port {port}")
    health_command = df.exec_form(health) if health is not None else []
    if health is not None and health_command[:2] != [binary, "healthcheck"] \
            and not any(f":{port}/" in part for part in health_command):
        problems.append(f"HEALTHCHECK does not use the listen port {port}")
    return problems


def main() -> int:
    root = Path(sys.argv[1])
    problems = lint(root)
    for problem in problems:
        print(f"Dockerfile: {problem}")
    if not problems:
        print("Dockerfile: multi-stage, pinned bases, dependency layer, non-root USER, HEALTHCHECK "
              "on /healthz, only the binary copied into the runtime image")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
