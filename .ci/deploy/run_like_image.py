"""Runs the release binary the way the image does, without a container engine.

A scratch root holds only what the runtime image holds: the binary at the Dockerfile's COPY
destination, the shared libraries it links (the debian-slim base), the CA bundle
(ca-certificates) and the configuration at the mounted path. The binary runs chrooted there
with the Dockerfile's ENTRYPOINT + CMD, as the Dockerfile's USER with no capabilities and
no_new_privs, on a root filesystem it cannot write, with the environment a container gets
from `--env-file`. The configuration is deploy/bridge.toml with two changes only: the sample
store instead of Shopify (no network here) and agent-profile negotiation off. Redis is a real
redis-server with a password, so the idempotency path of the deploy config runs too.

Usage (as root): python run_like_image.py REPO_ROOT BINARY WORK_DIR [--shared-network]
Run inside a fresh network namespace (`unshare --net`) it listens on 0.0.0.0:8080 exactly as
in the container; with --shared-network it moves to a free loopback port instead.
"""

import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

import tomli_w
import yaml

import dockerfile as df

CONFIG = "/etc/bcp-bridge/bridge.toml"
AGENT = "https://agent.example/profile.json"
WEBHOOK_SECRET = "deploy-check-webhook-secret-0123456789"
REDIS_PASSWORD = "deploy-check-redis-password-9876543210"
PR_SET_NO_NEW_PRIVS = 38
DOCKER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class Failed(Exception):
    pass


def step(message: str) -> None:
    print(f"  ok  {message}", flush=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def http(method, url, body=None, host=None, timeout=5.0):
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if host:
        headers["Host"] = host
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def linked_libraries(binary: Path) -> list[Path]:
    output = subprocess.run(["ldd", str(binary)], check=True, capture_output=True, text=True).stdout
    libraries = []
    for line in output.splitlines():
        parts = line.split()
        for part in parts:
            if part.startswith("/"):
                libraries.append(Path(part))
    return libraries


def build_root(root: Path, binary: Path, destination: str, config_text: str) -> Path:
    if root.exists():
        shutil.rmtree(root)
    for library in linked_libraries(binary):
        target = root / library.relative_to("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(library.resolve(), target)
    bundle = Path("/etc/ssl/certs/ca-certificates.crt")
    if bundle.exists():
        (root / "etc/ssl/certs").mkdir(parents=True, exist_ok=True)
        shutil.copy2(bundle, root / "etc/ssl/certs/ca-certificates.crt")
    target = root / destination.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(binary, target)
    target.chmod(0o755)
    config = root / CONFIG.lstrip("/")
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(config_text)
    # Root-owned and not writable by anyone else: the read-only root filesystem of the pod.
    for path in [root, *root.rglob("*")]:
        os.chown(path, 0, 0, follow_symlinks=False)
        if path.is_dir():
            path.chmod(0o755)
        else:
            # Modes as packaged (the dynamic loader is executable), never group/other-writable.
            path.chmod(path.stat().st_mode & 0o755)
    return root


def start_redis(port: int) -> subprocess.Popen:
    redis = subprocess.Popen(
        ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "",
         "--appendonly", "no", "--requirepass", REDIS_PASSWORD],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        ping = subprocess.run(["redis-cli", "-p", str(port), "-a", REDIS_PASSWORD, "--no-auth-warning", "ping"],
                              capture_output=True, text=True)
        if ping.stdout.strip() == "PONG":
            return redis
        time.sleep(0.05)
    redis.kill()
    raise Failed("redis-server did not start")


def drop_to(uid: int, gid: int, root: Path):
    libc = ctypes.CDLL(None, use_errno=True)

    def in_child():
        os.chroot(root)
        os.chdir("/")
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")

    return in_child


def proc_status(pid: int) -> dict[str, str]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return fields


def mcp(base, host, request_id, name, arguments):
    body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}
    status, text = http("POST", f"{base}/bcp/mcp", body, host=host)
    if status != 200:
        raise Failed(f"{name}: HTTP {status}: {text[:500]}")
    reply = json.loads(text)
    if "result" not in reply:
        raise Failed(f"{name}: {text[:500]}")
    return reply["result"]


def run(repo: Path, binary: Path, work: Path, shared_network: bool) -> None:
    image = df.parse(repo / "Dockerfile")
    runtime = image.runtime
    _, _, destination = df.copy_parts(runtime.all("COPY")[0])
    command = df.exec_form(runtime.last("ENTRYPOINT")) + df.exec_form(runtime.last("CMD"))
    healthcheck = df.exec_form(runtime.last("HEALTHCHECK"))
    uid, _, gid = runtime.last("USER").args.partition(":")
    uid, gid = int(uid), int(gid or uid)
    if command[0] != destination:
        raise Failed(f"ENTRYPOINT {command[0]} is not the copied binary {destination}")

    config = tomllib.loads((repo / "deploy/bridge.toml").read_text())
    public = config["server"]["public_base_url"].rstrip("/")
    public_host = public.split("://", 1)[1]
    config["store"] = {"platform": "sample"}
    config["negotiation"] = {"enabled": False}
    listen = config["server"]["listen"]
    port = int(listen.rsplit(":", 1)[1])
    redis_port = 6379
    if shared_network:
        # No private network namespace: stay off ports other processes on this machine use.
        new_port = free_port()
        config["server"]["listen"] = f"127.0.0.1:{new_port}"
        port, redis_port = new_port, free_port()
    else:
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    base = f"http://127.0.0.1:{port}"

    root = build_root(work / "root", binary, destination, tomli_w.dumps(config))
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    step(f"scratch root holds only {len(files)} files: {', '.join(f for f in files if 'lib' not in f)} + libraries")

    environment = {
        "PATH": DOCKER_PATH,
        "BCP_WEBHOOK_SECRET": WEBHOOK_SECRET,
        "BCP_REDIS_URL": f"redis://:{REDIS_PASSWORD}@127.0.0.1:{redis_port}/0",
        "RUST_LOG": "info,rmcp=warn",
    }
    stdout_path, stderr_path = work / "stdout.log", work / "stderr.log"
    redis = start_redis(redis_port)
    try:
        with open(stdout_path, "w") as stdout, open(stderr_path, "w") as stderr:
            bridge = subprocess.Popen(command, env=environment, stdout=stdout, stderr=stderr,
                                      preexec_fn=drop_to(uid, gid, root), close_fds=True)
    except BaseException:
        # redis-server would outlive a network namespace nobody can enter any more.
        redis.kill()
        redis.wait()
        raise
    try:
        started = time.monotonic()
        while True:
            if bridge.poll() is not None:
                raise Failed(f"the bridge exited with {bridge.returncode}")
            try:
                status, _ = http("GET", f"{base}/healthz", timeout=0.5)
                if status == 200:
                    break
            except OSError:
                pass
            if time.monotonic() - started > 15:
                raise Failed("no answer on /healthz within 15 s")
            time.sleep(0.05)
        step(f"`{' '.join(command)}` answers /healthz after {(time.monotonic() - started) * 1000:.0f} ms")

        status = proc_status(bridge.pid)
        if status["Uid"].split()[:2] != [str(uid)] * 2 or status["Gid"].split()[:2] != [str(gid)] * 2:
            raise Failed(f"runs as uid {status['Uid']} gid {status['Gid']}, not {uid}:{gid}")
        if status["CapEff"].strip("0") or status["CapPrm"].strip("0") or status.get("NoNewPrivs") != "1":
            raise Failed(f"capabilities {status['CapEff']}/{status['CapPrm']}, no_new_privs {status.get('NoNewPrivs')}")
        step(f"runs as {uid}:{gid}, no supplementary groups ({status['Groups'] or 'none'}), no capabilities, no_new_privs")

        # Inside the image's root, as its user, with its environment: the probe reads the
        # mounted config to find the port, as Docker runs it.
        check = subprocess.run(healthcheck, capture_output=True, text=True, timeout=10, env=environment,
                               preexec_fn=drop_to(uid, gid, root), close_fds=True)
        if check.returncode != 0:
            raise Failed(f"the image's HEALTHCHECK failed: {check.stderr}")
        step(f"the Dockerfile's HEALTHCHECK command passes: {' '.join(healthcheck)}")

        status, text = http("GET", f"{base}/readyz")
        if status != 200:
            raise Failed(f"/readyz: HTTP {status} {text}")
        step("/readyz: 200")

        status, text = http("GET", f"{base}/.well-known/bcp", host=public_host)
        if status != 200 or f"{public}/bcp/mcp" not in text:
            raise Failed(f"the discovery profile does not advertise {public}/bcp/mcp: {status} {text[:300]}")
        step(f"discovery profile advertises public_base_url's endpoint {public}/bcp/mcp")

        meta = {"ucp-agent": {"profile": AGENT}}
        found = mcp(base, public_host, 1, "search_catalog", {"meta": meta, "catalog": {"query": "shoes"}})
        products = found["structuredContent"]["products"]
        if not products:
            raise Failed("search_catalog found nothing in the sample store")
        step(f"MCP tools/call search_catalog through Host {public_host}: {len(products)} products")

        status, _ = http("POST", f"{base}/bcp/mcp", {"jsonrpc": "2.0", "id": 2, "method": "ping"},
                         host="rebinding.attacker.example")
        if status < 400:
            raise Failed(f"a foreign Host header got HTTP {status}: DNS-rebinding protection is off")
        step(f"a foreign Host header is refused (HTTP {status}): only public_base_url's host is served")

        variant = products[0]["variants"][0]["id"]
        keyed = {**meta, "idempotency-key": "deploy-check-create-1"}
        cart = {"line_items": [{"item": {"id": variant}, "quantity": 1}]}
        first = mcp(base, public_host, 3, "create_cart", {"meta": keyed, "cart": cart})
        again = mcp(base, public_host, 4, "create_cart", {"meta": keyed, "cart": cart})
        first_id, again_id = first["structuredContent"]["id"], again["structuredContent"]["id"]
        keys = subprocess.run(["redis-cli", "-p", str(redis_port), "-a", REDIS_PASSWORD, "--no-auth-warning",
                               "dbsize"], capture_output=True, text=True).stdout.strip()
        if first_id != again_id or keys in ("", "0"):
            raise Failed(f"keyed create_cart not replayed through Redis: {first_id} vs {again_id}, {keys} keys")
        step(f"keyed create_cart replayed from Redis (same cart {first_id}, {keys} key(s) in Redis)")

        rss_kib = int(proc_status(bridge.pid)["VmRSS"].split()[0])
        deployment = yaml.safe_load((repo / "deploy/kubernetes/replicas/deployment.yaml").read_text())
        request = deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["memory"]
        if not request.endswith("Mi") or rss_kib / 1024 >= int(request[:-2]):
            raise Failed(f"RSS {rss_kib} KiB is not below the Kubernetes memory request {request}")
        step(f"RSS after the calls: {rss_kib / 1024:.1f} MiB, below the Kubernetes request {request}")

        stopping = time.monotonic()
        bridge.send_signal(signal.SIGTERM)
        code = bridge.wait(timeout=10)
        if code != 0:
            raise Failed(f"SIGTERM: exit code {code}")
        step(f"SIGTERM (the image's STOPSIGNAL): clean exit 0 in {(time.monotonic() - stopping) * 1000:.0f} ms")

        logs = stderr_path.read_text() + stdout_path.read_text()
        for secret in (WEBHOOK_SECRET, REDIS_PASSWORD):
            if secret in logs:
                raise Failed("a secret from the environment reached the logs")
        lines = [line for line in stderr_path.read_text().splitlines() if line.strip()]
        if not lines or not all(line.startswith("{") for line in lines):
            raise Failed("stderr is not JSON lines (--log-json)")
        if stdout_path.read_text().strip():
            raise Failed("with --log-json the banner still went to stdout as text")
        step(f"{len(lines)} log lines, all JSON; neither secret appears in any output")
        written = [str(p) for p in root.rglob("*") if p.stat().st_uid != 0]
        if written:
            raise Failed(f"files written in the root filesystem: {written}")
    except Failed:
        print("---- bridge stderr ----\n" + stderr_path.read_text()[-4000:], file=sys.stderr)
        raise
    finally:
        if bridge.poll() is None:
            bridge.kill()
            bridge.wait()
        redis.terminate()
        redis.wait(timeout=10)


def main() -> int:
    if os.geteuid() != 0:
        print("run_like_image: needs root (chroot and the switch to the image's user)")
        return 1
    repo, binary, work = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    work.mkdir(parents=True, exist_ok=True)
    try:
        run(repo, binary, work, "--shared-network" in sys.argv[4:])
    except (Failed, subprocess.SubprocessError, OSError, KeyError, ValueError) as error:
        print(f"run_like_image: FAILED: {error}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
