"""What the schemas cannot see: the deployment files agree with each other, with the image and
with the bridge's configuration rules.

Usage: python check_manifests.py REPO_ROOT OUT_DIR
Writes every bridge configuration embedded in a manifest to OUT_DIR/<name>.toml, with an
OUT_DIR/<name>.env of the variables its pod or service provides, for `bcp-bridge check`.
"""

import re
import sys
import tomllib
from pathlib import Path

import yaml

import dockerfile as df

CONFIG_DIR = "/etc/bcp-bridge"


def env_names(config: dict) -> set[str]:
    """Every `{ env = "NAME" }` the configuration reads."""
    found = set()

    def walk(value):
        if isinstance(value, dict):
            if set(value) == {"env"} and isinstance(value["env"], str):
                found.add(value["env"])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(config)
    return found


def env_file(path: Path) -> dict[str, str]:
    pairs = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, value = line.partition("=")
            pairs[name.strip()] = value
    return pairs


def peak_rss_mib(root: Path) -> float:
    text = (root / "BENCHMARKS.md").read_text()
    # bench/throughput.sh's row (issue 14's table named its 40 MB target in it); the older
    # bench/run.sh table called it "peak RSS during the load tests above".
    match = re.search(
        r"(?:RSS under load(?: < 40 MB)? \(peak over the rows above\)|peak RSS during the load tests above)"
        r" \| ([\d.]+) MB",
        text,
    )
    if not match:
        raise ValueError("BENCHMARKS.md: no 'RSS under load (peak over the rows above)' row")
    return float(match.group(1)) * 1e6 / 2**20


def mebibytes(quantity: str) -> float:
    units = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024, "M": 1e6 / 2**20, "G": 1e9 / 2**20}
    for suffix, factor in units.items():
        if quantity.endswith(suffix):
            return float(quantity[: -len(suffix)]) * factor
    return float(quantity) / 2**20


def check_bridge_container(where, pod, container, image_args, peak, problems):
    if container.get("args") != image_args:
        problems.append(f"{where}: args {container.get('args')} differ from the image's CMD {image_args}")
    probes = {
        "livenessProbe": "/healthz",
        "readinessProbe": "/readyz",
    }
    for probe, path in probes.items():
        got = container.get(probe, {}).get("httpGet", {}).get("path")
        if got != path:
            problems.append(f"{where}: {probe} must GET {path} (has {got})")
    pod_security = pod.get("securityContext", {})
    security = container.get("securityContext", {})
    if not (security.get("runAsNonRoot") or pod_security.get("runAsNonRoot")):
        problems.append(f"{where}: runAsNonRoot not set")
    uid = security.get("runAsUser", pod_security.get("runAsUser"))
    if not uid:
        problems.append(f"{where}: runAsUser must be the image's non-root uid")
    if security.get("readOnlyRootFilesystem") is not True:
        problems.append(f"{where}: readOnlyRootFilesystem must be true")
    if security.get("allowPrivilegeEscalation") is not False:
        problems.append(f"{where}: allowPrivilegeEscalation must be false")
    if security.get("capabilities", {}).get("drop") != ["ALL"]:
        problems.append(f"{where}: capabilities must drop ALL")
    resources = container.get("resources", {})
    request = resources.get("requests", {}).get("memory")
    limit = resources.get("limits", {}).get("memory")
    if not request or not limit or not resources.get("requests", {}).get("cpu"):
        problems.append(f"{where}: cpu and memory requests and a memory limit are required")
    elif mebibytes(request) < peak:
        problems.append(f"{where}: memory request {request} is below the measured peak RSS {peak:.1f} MiB")
    mounts = [m for m in container.get("volumeMounts", []) if m.get("mountPath") == CONFIG_DIR]
    if not mounts or not mounts[0].get("readOnly"):
        problems.append(f"{where}: the configuration must be mounted read-only at {CONFIG_DIR}")


def images_of(document) -> list[str]:
    spec = document.get("spec", {}).get("template", {}).get("spec", {})
    return [c["image"] for c in spec.get("containers", []) + spec.get("initContainers", [])]


def check(root: Path, out: Path) -> list[str]:
    problems: list[str] = []
    image = df.parse(root / "Dockerfile").runtime
    image_args = df.exec_form(image.last("CMD"))
    image_user = image.last("USER").args.split(":")[0]
    peak = peak_rss_mib(root)
    deploy_config = (root / "deploy/bridge.toml").read_text()

    kube = root / "deploy/kubernetes"
    for directory in sorted(p for p in kube.iterdir() if p.is_dir()):
        documents = []
        for path in sorted(directory.glob("*.yaml")):
            if path.name == "kustomization.yaml":
                continue
            for document in yaml.safe_load_all(path.read_text()):
                if document:
                    documents.append((path, document))
        kustomization = directory / "kustomization.yaml"
        if kustomization.exists():
            listed = set(yaml.safe_load(kustomization.read_text()).get("resources", []))
            present = {p.name for p, _ in documents}
            if listed != present:
                problems.append(f"{kustomization}: resources {sorted(listed)} != files {sorted(present)}")
        by_kind = {}
        for path, document in documents:
            by_kind.setdefault(document["kind"], []).append((path, document))
            for reference in images_of(document):
                _, tag = df.image_tag(reference)
                if tag in (None, "latest"):
                    problems.append(f"{path}: image {reference} must carry a pinned tag")
        config_maps = {d["metadata"]["name"]: (p, d) for p, d in by_kind.get("ConfigMap", [])}
        secrets = {d["metadata"]["name"]: d for _, d in by_kind.get("Secret", [])}
        for path, deployment in by_kind.get("Deployment", []):
            pod = deployment["spec"]["template"]["spec"]
            for container in pod["containers"]:
                if "bcp-bridge:" not in container["image"]:
                    continue
                where = f"{path.relative_to(root)}: {container['name']}"
                check_bridge_container(where, pod, container, image_args, peak, problems)
                uid = container.get("securityContext", {}).get("runAsUser", pod.get("securityContext", {}).get("runAsUser"))
                if str(uid) != image_user:
                    problems.append(f"{where}: runAsUser {uid} is not the image's USER {image_user}")
                volume = next(
                    v for v in pod["volumes"]
                    for m in container["volumeMounts"]
                    if m["mountPath"] == CONFIG_DIR and v["name"] == m["name"]
                )
                map_path, config_map = config_maps[volume["configMap"]["name"]]
                text = config_map["data"]["bridge.toml"]
                config = tomllib.loads(text)
                provided = {}
                for source in container.get("envFrom", []):
                    secret = secrets.get(source["secretRef"]["name"])
                    if secret is None:
                        problems.append(f"{where}: Secret {source['secretRef']['name']} is not in {directory.name}/")
                        continue
                    provided.update(secret.get("stringData", {}))
                for variable in container.get("env", []):
                    provided[variable["name"]] = variable.get("value", "")
                missing = env_names(config) - set(provided)
                if missing:
                    problems.append(f"{where}: the configuration reads {sorted(missing)}, which the pod does not set")
                replicas = deployment["spec"].get("replicas", 1)
                shared = "url" in config.get("redis", {}) or config.get("idempotency", {}).get("backend") == "redis"
                if replicas > 1 and not shared:
                    problems.append(f"{where}: {replicas} replicas need [redis] url (shared idempotency, budgets, locks)")
                listen = config["server"]["listen"]
                port = int(listen.rsplit(":", 1)[1])
                if not listen.startswith("0.0.0.0:") or port not in [p["containerPort"] for p in container["ports"]]:
                    problems.append(f"{where}: server.listen {listen} must be 0.0.0.0 on the container port")
                if directory.name == "replicas" and text != deploy_config:
                    problems.append(f"{map_path.relative_to(root)}: bridge.toml differs from deploy/bridge.toml")
                name = f"kubernetes-{directory.name}"
                (out / f"{name}.toml").write_text(text)
                (out / f"{name}.env").write_text("".join(f"{k}={v}\n" for k, v in provided.items()))

    # compose
    compose = yaml.safe_load((root / "deploy/compose.yaml").read_text())
    example = env_file(root / "deploy/bridge.env.example")
    missing = env_names(tomllib.loads(deploy_config)) - set(example)
    if missing:
        problems.append(f"deploy/bridge.env.example lacks {sorted(missing)}, which deploy/bridge.toml reads")
    for name, service in compose["services"].items():
        _, tag = df.image_tag(service["image"])
        if tag in (None, "latest"):
            problems.append(f"compose: service {name}: image must carry a pinned tag")
        if "healthcheck" not in service or service.get("restart") not in ("unless-stopped", "always", "on-failure"):
            problems.append(f"compose: service {name}: needs a healthcheck and a restart policy")
    bridge = compose["services"]["bridge"]
    targets = {v["target"]: v for v in bridge["volumes"] if isinstance(v, dict)}
    mounted = targets.get(f"{CONFIG_DIR}/bridge.toml")
    if not mounted or mounted["source"] != "./bridge.toml" or not mounted.get("read_only"):
        problems.append("compose: deploy/bridge.toml must be mounted read-only at the image's config path")
    if bridge.get("user", "").split(":")[0] != image_user or not bridge.get("read_only"):
        problems.append("compose: bridge must run as the image's user on a read-only root filesystem")
    if bridge["healthcheck"]["test"][1:] != df.exec_form(image.last("HEALTHCHECK")):
        problems.append("compose: the bridge's healthcheck differs from the image's HEALTHCHECK")
    if bridge.get("env_file") != ["bridge.env"]:
        problems.append("compose: secrets must come from env_file bridge.env")
    (out / "compose.toml").write_text(deploy_config)
    (out / "compose.env").write_text(
        "".join(f"{k}={v}\n" for k, v in {**example, **bridge.get("environment", {})}.items())
    )

    # systemd
    unit = (root / "deploy/systemd/bcp-bridge.service").read_text()
    start = re.search(r"^ExecStart=(.*)$", unit, re.M).group(1).split()
    if start[1:] != image_args:
        problems.append(f"systemd: ExecStart arguments {start[1:]} differ from the image's CMD {image_args}")
    for directive in ("EnvironmentFile=/etc/bcp-bridge/bridge.env", "NoNewPrivileges=yes",
                      "ProtectSystem=strict", "DynamicUser=yes"):
        if directive not in unit:
            problems.append(f"systemd: {directive} missing")
    return problems


def main() -> int:
    root, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    problems = check(root, out)
    for problem in problems:
        print(f"manifests: {problem}")
    if not problems:
        print("manifests: probes, security contexts, resources, images, secrets and configs agree")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
