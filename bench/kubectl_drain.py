"""joinops's drain and `kubectl drain` (v1.37) side by side, in one run, on the same simulated
cluster: each drains a node of N Deployment-owned pods (grace G), whose replacements the
simulated controllers schedule on a spare node. Targets: joinops at least 5x faster than kubectl
and within 1.3 grace periods. The floor, in the same run: every pod of a third node evicted at
once (one thread per pod, no checks, no budgets to read) and a watch until they are gone."""

from __future__ import annotations

import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes import client, watch

from bench.report import Figure, Result
from joinops.clusters.kube import KubeCluster
from kubesim import Cluster, NodeSpec, World
from kubesim.kubectl_binary import kubectl_path
from workers import drain

DEADLINE = 600.0


@dataclass(frozen=True)
class Sizes:
    pods: int  # Deployment-owned pods on each drained node
    grace: float  # seconds the simulated kubelet takes to finish a terminating pod


def _deployment(name: str, node: str, replicas: int) -> Any:
    labels = {"app": name}
    return {
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]},
            },
        },
    }


def _set_cordon(core: client.CoreV1Api, node: str, on: bool) -> None:
    core.patch_node(node, {"spec": {"unschedulable": True if on else None}})


def _place(sim: Cluster, core: client.CoreV1Api, nodes: list[str], node: str, pods: int) -> None:
    """A Deployment whose pods all land on ``node`` (every other node cordoned meanwhile)."""
    for other in nodes:
        _set_cordon(core, other, other != node)
    client.AppsV1Api(core.api_client).create_namespaced_deployment(
        "default", _deployment(f"app-{node}", node, pods)
    )
    sim.wait_for(
        lambda: (
            sum(1 for p in sim.pods(node=node) if p["status"].get("phase") == "Running") == pods
        ),
        timeout=120,
    )


def _all_at_once(core: client.CoreV1Api, node: str) -> None:
    """The floor: evict every pod of the node at once, then watch until they are all gone."""
    listing: Any = core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node}")
    left = {p.metadata.uid for p in listing.items}

    def evict(pod: Any) -> None:
        meta = client.V1ObjectMeta(name=pod.metadata.name, namespace=pod.metadata.namespace)
        core.create_namespaced_pod_eviction(
            pod.metadata.name, pod.metadata.namespace, client.V1Eviction(metadata=meta)
        )

    with ThreadPoolExecutor(len(listing.items)) as pool:
        list(pool.map(evict, listing.items))
    stream = watch.Watch()
    for event in stream.stream(
        core.list_pod_for_all_namespaces,
        field_selector=f"spec.nodeName={node}",
        resource_version=listing.metadata.resource_version,
        timeout_seconds=int(DEADLINE),
    ):
        if event["type"] == "DELETED":
            left.discard(event["object"].metadata.uid)
            if not left:
                stream.stop()
    if left:
        raise RuntimeError(f"the floor drain left {len(left)} pods on {node}")


def run(sizes: Sizes) -> Result:
    binary = str(kubectl_path())
    nodes = ["ours", "kubectl", "floor", "spare"]
    with World(pod_grace_seconds=sizes.grace) as world, tempfile.TemporaryDirectory() as tmp:
        sim = world.add_cluster(
            "src",
            nodes=[NodeSpec("cp", role="control-plane"), *(NodeSpec(n) for n in nodes)],
        )
        kubeconfig = sim.write_kubeconfig(Path(tmp) / "kubeconfig")
        raw = sim.api_client()
        core = client.CoreV1Api(raw)
        for node in ("ours", "kubectl", "floor"):
            _place(sim, core, nodes, node, sizes.pods)
        _set_cordon(core, "ours", False)
        _set_cordon(core, "spare", False)  # replacements go to the spare (or the other node)
        kube = KubeCluster("src", raw, timeout_seconds=30)
        kube.version()  # warm up, as kubectl's discovery is part of its run
        started = time.perf_counter()
        drain.cordon(kube, "ours")
        outcome = drain.drain(
            kube, "ours", deadline=time.time() + DEADLINE, progress=lambda *_: None
        )
        ours = time.perf_counter() - started
        if not outcome.done or outcome.evicted != sizes.pods:
            raise RuntimeError(f"joinops drain: {outcome}")
        base = [binary, "--kubeconfig", str(kubeconfig), "--cache-dir", f"{tmp}/cache"]
        subprocess.run([*base, "version"], capture_output=True, timeout=60)  # warm caches
        started = time.perf_counter()
        done = subprocess.run(
            [*base, "drain", "kubectl", "--ignore-daemonsets", f"--timeout={int(DEADLINE)}s"],
            capture_output=True,
            text=True,
            timeout=DEADLINE + 60,
        )
        theirs = time.perf_counter() - started
        if done.returncode != 0 or sim.pods(node="kubectl"):
            raise RuntimeError(f"kubectl drain failed: {done.stderr[-500:]}")
        _set_cordon(core, "floor", True)
        started = time.perf_counter()
        _all_at_once(core, "floor")
        floor = time.perf_counter() - started
    return Result(
        "kubectl_drain",
        "Drain vs kubectl",
        params={"pods": sizes.pods, "grace_seconds": sizes.grace, "kubectl": "v1.37"},
        samples={"joinops_seconds": [ours], "kubectl_seconds": [theirs], "floor_seconds": [floor]},
        figures=[
            Figure(
                f"joinops drain, {sizes.pods} Deployment pods, {sizes.grace:g} s grace",
                ours,
                "s",
                f"target <= {1.3 * sizes.grace:.1f} s (1.3 graces)",
                "met" if ours <= 1.3 * sizes.grace else "missed",
            ),
            Figure(
                "kubectl drain, same cluster, same run",
                theirs,
                "s",
                f"{theirs / sizes.grace:.1f} graces",
                "",
            ),
            Figure(
                "floor: every pod evicted at once, same cluster, same run",
                floor,
                "s",
                f"joinops / floor: {ours / floor:.2f}x",
                "",
            ),
            Figure(
                "kubectl / joinops",
                theirs / ours,
                "x",
                "target >= 5x",
                "met" if theirs / ours >= 5 else "missed",
            ),
        ],
    )
