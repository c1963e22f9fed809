"""Checks on rendered chart output, run by scripts/chart-check.sh (they need helm's output).

deploy_check.py validate --kubernetes-version 1.33.0 RENDERED.yaml...
    every object against the Kubernetes schemas in strict mode (kubernetes-validate), every pod
    hardened (requests, non-root, read-only root, no privilege escalation, no capabilities,
    RuntimeDefault seccomp, /tmp an emptyDir), the rendered JOINOPS_CONFIG accepted by joinops,
    every kubeconfig it names mounted in the bot and the worker, and the bot's Deployment rolled
    without a gap (maxUnavailable 0, /readyz, a drain; a PodDisruptionBudget when several).
deploy_check.py rbac --service-account NS/NAME RENDERED.yaml
    the chart's managed-cluster RBAC grants exactly what deploy/managed-cluster-rbac.yaml does.
"""

from __future__ import annotations

import argparse
import posixpath
import sys
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from deploy_rbac import MANIFEST, grants, load_documents, policy_from_manifest

WORKLOADS = {"Deployment", "StatefulSet"}


def validate_objects(docs: list[dict[str, Any]], version: str) -> list[str]:
    import kubernetes_validate

    problems = []
    for doc in docs:
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as e:
            problems.append(f"{_kn(doc)}: {e.message} at /{'/'.join(map(str, e.path))}")
        except kubernetes_validate.SchemaNotFoundError:
            problems.append(f"{_kn(doc)}: no schema for {doc.get('apiVersion')} in {version}")
    return problems


def pod_problems(doc: dict[str, Any]) -> list[str]:
    spec = doc["spec"]["template"]["spec"]
    where = _kn(doc)
    problems = []
    pod_security = spec.get("securityContext") or {}
    if not pod_security.get("runAsNonRoot"):
        problems.append(f"{where}: runAsNonRoot is not set")
    if (pod_security.get("seccompProfile") or {}).get("type") != "RuntimeDefault":
        problems.append(f"{where}: seccompProfile is not RuntimeDefault")
    tmp_volumes = {v["name"] for v in spec.get("volumes") or [] if "emptyDir" in v}
    for container in spec.get("initContainers", []) + spec["containers"]:
        name = f"{where} container {container['name']}"
        if not (container.get("resources") or {}).get("requests"):
            problems.append(f"{name}: no resource requests")
        security = container.get("securityContext") or {}
        if security.get("readOnlyRootFilesystem") is not True:
            problems.append(f"{name}: root filesystem is writable")
        if security.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{name}: privilege escalation is allowed")
        if (security.get("capabilities") or {}).get("drop") != ["ALL"]:
            problems.append(f"{name}: capabilities are not all dropped")
        mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts") or []}
        if mounts.get("/tmp") not in tmp_volumes:
            problems.append(f"{name}: /tmp is not an emptyDir")
    return problems


def bot_strategy_problems(doc: dict[str, Any]) -> list[str]:
    """The bot keeps answering Slack through an upgrade: a RollingUpdate that starts a new bot
    before it stops an old one (`maxUnavailable: 0`; Kubernetes' default, 25 %, lets one of four
    go first), pods that take traffic only once ready (/readyz) and get time to drain."""
    if not _is_bot(doc):
        return []
    spec = doc.get("spec") or {}
    problems = []
    if not isinstance(spec.get("replicas"), int) or spec["replicas"] < 1:
        problems.append(f"{_kn(doc)}: replicas is {spec.get('replicas')!r}, not at least 1")
    strategy = spec.get("strategy") or {}
    kind = strategy.get("type", "RollingUpdate")  # Kubernetes' default
    if kind != "RollingUpdate":
        problems.append(f"{_kn(doc)}: strategy is {kind}: an upgrade leaves Slack unanswered")
    elif (strategy.get("rollingUpdate") or {}).get("maxUnavailable") != 0:
        problems.append(f"{_kn(doc)}: maxUnavailable is not 0: an old bot may stop first")
    pod = (spec.get("template") or {}).get("spec") or {}
    container = next(iter(pod.get("containers") or []), {})
    probe = ((container.get("readinessProbe") or {}).get("httpGet") or {}).get("path")
    if probe != "/readyz":
        problems.append(f"{_kn(doc)}: no readinessProbe on /readyz: traffic before it is ready")
    if "--drain-seconds" not in (container.get("args") or []):
        problems.append(f"{_kn(doc)}: no --drain-seconds: it stops while the Service still sends")
    return problems


def bot_budget_problems(docs: list[dict[str, Any]]) -> list[str]:
    """Several bots: a PodDisruptionBudget keeps one through a node's drain."""
    bots = [d for d in docs if _is_bot(d) and ((d.get("spec") or {}).get("replicas") or 0) > 1]
    budgets = [
        d
        for d in docs
        if d.get("kind") == "PodDisruptionBudget"
        and (d.get("spec") or {}).get("minAvailable") == 1
        and ((d["spec"].get("selector") or {}).get("matchLabels") or {}).get(
            "app.kubernetes.io/component"
        )
        == "bot"
    ]
    if bots and not budgets:
        return [f"{_kn(bots[0])}: several bots and no PodDisruptionBudget of minAvailable 1"]
    return []


def _is_bot(doc: dict[str, Any]) -> bool:
    labels = doc.get("metadata", {}).get("labels") or {}
    return doc.get("kind") == "Deployment" and labels.get("app.kubernetes.io/component") == "bot"


def config_problems(docs: list[dict[str, Any]]) -> list[str]:
    from joinops.settings import FileConfig

    maps = [d for d in docs if d["kind"] == "ConfigMap" and "config.yaml" in d.get("data", {})]
    if len(maps) != 1:
        return [f"expected one ConfigMap with config.yaml, found {len(maps)}"]
    config = FileConfig.model_validate(yaml.safe_load(maps[0]["data"]["config.yaml"]))
    problems = []
    for doc in docs:
        if doc["kind"] != "Deployment":
            continue
        for container in doc["spec"]["template"]["spec"]["containers"]:
            env = {e["name"]: e for e in container.get("env", [])}
            mounts = {m["mountPath"] for m in container.get("volumeMounts", [])}
            config_path = env.get("JOINOPS_CONFIG", {}).get("value", "")
            if posixpath.dirname(config_path) not in mounts:
                problems.append(f"{_kn(doc)}: JOINOPS_CONFIG {config_path!r} is not mounted")
            for name, cluster in config.clusters.items():
                directory = posixpath.dirname(str(cluster.kubeconfig))
                if directory not in mounts:
                    problems.append(
                        f"{_kn(doc)}: kubeconfig of {name} ({directory}) is not mounted"
                    )
            for key in ("SLACK_BOT_TOKEN", "REDIS_URL", "SLACK_API_URL"):
                if key not in env:
                    problems.append(f"{_kn(doc)}: {key} is not set")
    return problems


def _kn(doc: dict[str, Any]) -> str:
    return f"{doc.get('kind')} {doc.get('metadata', {}).get('name')}"


def _load(paths: list[Path]) -> list[dict[str, Any]]:
    docs = []
    for path in paths:
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="deploy_check.py")
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("validate")
    v.add_argument("--kubernetes-version", required=True)
    v.add_argument("--no-config", action="store_true", help="files are not a chart rendering")
    v.add_argument("files", nargs="+", type=Path)
    r = sub.add_parser("rbac")
    r.add_argument("--service-account", required=True, help="NAMESPACE/NAME")
    r.add_argument("file", type=Path)
    args = parser.parse_args(argv)

    if args.command == "rbac":
        namespace, _, name = args.service_account.partition("/")
        chart = grants(policy_from_manifest(_load([args.file]), (namespace, name)))
        manifest = grants(policy_from_manifest(load_documents(MANIFEST)))
        problems = [f"the chart also grants: {g}" for g in sorted(chart - manifest)]
        problems += [f"the chart lacks: {g}" for g in sorted(manifest - chart)]
        if not chart:
            problems.append("the rendering binds no managed-cluster rules")
        _report(problems, f"{args.file.name}: {len(chart)} permissions, the manifest's")
        return 1 if problems else 0

    problems = []
    total = 0
    for path in args.files:
        docs = _load([path])
        total += len(docs)
        found = validate_objects(docs, args.kubernetes_version)
        for doc in docs:
            if doc["kind"] in WORKLOADS:
                found += pod_problems(doc)
            found += bot_strategy_problems(doc)
        found += bot_budget_problems(docs)
        if not args.no_config:
            found += config_problems(docs)
        problems += [f"{path.name}: {p}" for p in found]
    _report(
        problems, f"{total} objects in {len(args.files)} files valid for {args.kubernetes_version}"
    )
    return 1 if problems else 0


def _report(problems: list[str], ok: str) -> None:
    for problem in problems:
        print(f"chart-check: {problem}", file=sys.stderr)
    if not problems:
        print(f"chart-check: {ok}")


if __name__ == "__main__":
    sys.exit(main())
