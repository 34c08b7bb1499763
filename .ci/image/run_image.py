"""Runs the built image as a container and checks it from outside (.ci/image.sh).

The container is started with `buildah from` + `buildah run --isolation chroot` (podman run
cannot set rlimits on this machine), as the image's USER, with the image's ENTRYPOINT + CMD,
a config mounted read-only at the path the CMD serves, and its secret passed as an environment
variable that the file names with `{ env = … }`. chroot isolation shares the host's network, so
the config listens on a free loopback port and the checks are plain HTTP from here.

Usage (as root): python3 run_image.py IMAGE WORK_DIR
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

CONFIG = "/etc/bcp-bridge/bridge.toml"
SECRET = "image-check-webhook-secret-0123456789"
USER = "10001:10001"


class Failed(Exception):
    pass


def step(message: str) -> None:
    print(f"  ok  {message}", flush=True)


def buildah(*args: str) -> str:
    return subprocess.run(["buildah", *args], check=True, capture_output=True, text=True).stdout.strip()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def http(method, url, body=None, timeout=5.0):
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def descendants(pid: int) -> list[int]:
    found, queue = [], [pid]
    while queue:
        parent = queue.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            children = (task / "children").read_text().split() if (task / "children").exists() else []
            for child in map(int, children):
                found.append(child)
                queue.append(child)
    return found


def run(image: str, work: Path) -> None:
    config = json.loads(buildah("inspect", "--type", "image", image))
    docker = config.get("Docker", {}).get("config", {})
    command = (docker.get("Entrypoint") or []) + (docker.get("Cmd") or [])
    probe = (docker.get("Healthcheck") or {}).get("Test") or []
    if probe[:1] != ["CMD"] or CONFIG not in command:
        raise Failed(f"unexpected image config: command {command}, healthcheck {probe}")
    probe = probe[1:]

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    work.mkdir(parents=True, exist_ok=True)
    mounted = work / "bridge.toml"
    mounted.write_text(
        f'[server]\nlisten = "127.0.0.1:{port}"\n\n[store]\nplatform = "sample"\n\n'
        '[cache]\nwebhook_secret = { env = "BCP_WEBHOOK_SECRET" }\n\n[negotiation]\nenabled = false\n'
    )
    mounted.chmod(0o644)
    flags = ["--isolation", "chroot", "--user", USER, "-v", f"{mounted}:{CONFIG}:ro",
             "--env", f"BCP_WEBHOOK_SECRET={SECRET}", "--env", "RUST_LOG=info,rmcp=warn"]

    container = buildah("from", "--pull=never", "--name", f"bcp-image-check-{os.getpid()}", image)
    stdout_path, stderr_path = work / "stdout.log", work / "stderr.log"
    bridge = None
    try:
        started_at = time.time()
        with open(stdout_path, "w") as stdout, open(stderr_path, "w") as stderr:
            bridge = subprocess.Popen(["buildah", "run", *flags, container, "--", *command],
                                      stdout=stdout, stderr=stderr)
        started = time.monotonic()
        while True:
            if bridge.poll() is not None:
                raise Failed(f"the container exited with {bridge.returncode}: {stderr_path.read_text()[-2000:]}")
            try:
                if http("GET", f"{base}/healthz", timeout=0.5) == (200, "ok"):
                    break
            except OSError:
                pass
            if time.monotonic() - started > 30:
                raise Failed("no answer on /healthz within 30 s")
            time.sleep(0.1)
        step(f"`{' '.join(command)}` as {USER} answers /healthz after {time.monotonic() - started:.1f} s")

        status, text = http("GET", f"{base}/readyz")
        if status != 200:
            raise Failed(f"/readyz: HTTP {status} {text}")
        step(f"/readyz: 200 {text.strip()[:80]}")

        checked = subprocess.run(["buildah", "run", *flags, container, "--", *probe],
                                 capture_output=True, text=True, timeout=30)
        if checked.returncode != 0:
            raise Failed(f"the image's HEALTHCHECK failed ({checked.returncode}): {checked.stderr}")
        step(f"the image's HEALTHCHECK `{' '.join(probe)}` passes: {checked.stdout.strip()}")

        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "search_catalog",
                           "arguments": {"meta": {"ucp-agent": {"profile": "https://agent.example/profile.json"}},
                                         "catalog": {"query": "shoes"}}}}
        status, text = http("POST", f"{base}/bcp/mcp", body)
        reply = json.loads(text) if status == 200 else {}
        products = reply.get("result", {}).get("structuredContent", {}).get("products")
        if not products:
            raise Failed(f"tools/call search_catalog: HTTP {status}: {text[:500]}")
        step(f"MCP tools/call search_catalog on the sample store: {len(products)} products")

        pids = [pid for pid in descendants(bridge.pid)
                if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode() == command[0]]
        if len(pids) != 1:
            raise Failed(f"cannot tell the bridge process among {descendants(bridge.pid)}")
        stopping = time.monotonic()
        os.kill(pids[0], signal.SIGTERM)
        code = bridge.wait(timeout=20)
        if code != 0:
            raise Failed(f"SIGTERM: exit code {code}")
        step(f"SIGTERM: the container exits 0 in {(time.monotonic() - stopping) * 1000:.0f} ms")

        logs = stderr_path.read_text()
        lines = [line for line in logs.splitlines() if line.strip()]
        if SECRET in logs + stdout_path.read_text():
            raise Failed("the secret from the environment reached the output")
        if not lines or not all(line.startswith("{") for line in lines):
            raise Failed(f"stderr is not JSON lines: {logs[:500]}")
        if stdout_path.read_text().strip():
            raise Failed(f"stdout is not empty under --log-json: {stdout_path.read_text()[:300]}")
        step(f"{len(lines)} log lines, all JSON, stdout empty; the secret appears nowhere")

        root = Path(buildah("mount", container))
        try:
            written = []
            for path in root.rglob("*"):
                relative = "/" + str(path.relative_to(root))
                if relative.startswith("/tmp/") or relative.startswith(("/proc/", "/sys/", "/dev/")):
                    continue
                info = path.lstat()
                # Anything the bridge's user owns, or anything changed since the start other
                # than the files buildah itself bind-mounts over (hosts, resolv.conf, the config).
                if info.st_uid == 10001 or (info.st_mtime > started_at and not path.is_dir()
                                            and relative not in ("/etc/hosts", "/etc/resolv.conf",
                                                                 "/etc/hostname", CONFIG,
                                                                 "/run/.containerenv")):
                    written.append(relative)
            if written:
                raise Failed(f"written outside /tmp: {written[:20]}")
            step("nothing written outside /tmp in the container's filesystem")
        finally:
            buildah("umount", container)
    finally:
        if bridge is not None and bridge.poll() is None:
            for pid in descendants(bridge.pid):
                os.kill(pid, signal.SIGKILL)
            bridge.kill()
            bridge.wait()
        subprocess.run(["buildah", "rm", container], capture_output=True)


def main() -> int:
    try:
        run(sys.argv[1], Path(sys.argv[2]))
    except Failed as failure:
        print(f"FAILED: {failure}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
