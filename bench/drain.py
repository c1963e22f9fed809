"""Drain: a node with N pods whose termination takes a fixed grace, joinops vs one at a time.

Measured: `workers.drain.drain` (parallel evictions, then a watch until the pods are gone), the
code a migration's drain step runs, in-process against a simulated cluster. Compared against a
baseline written here with the official client: evict one pod, watch until it is gone, then the
next. Parallel eviction should take about one grace period; the baseline about N of them.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes import client, watch

from bench.report import Figure, Result
from bench.support import median, settings_for
from joinops.clusters.kube import KubeCluster
from joinops.clusters.registry import ClusterRegistry
from kubesim import Cluster, NodeSpec, World
from workers import drain

DEADLINE = 600.0  # seconds either drain may take before the benchmark gives up


@dataclass(frozen=True)
class Sizes:
    pods: int  # pods on the drained node, each owned by a ReplicaSet, no disruption budget
    grace: float  # seconds the simulated kubelet takes to finish a terminating pod
    repeats: int  # joinops drains (each of a fresh node)
    baseline_repeats: int  # one-at-a-time drains (each takes about pods x grace)


def one_at_a_time(cluster: KubeCluster, node: str) -> int:
    """The baseline: evict a pod, wait on a watch until it is gone, then the next one."""
    core = cluster.core
    # The client types every field Optional; a list's metadata and a pod's name are always set.
    listing: Any = core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node}")
    version = str(listing.metadata.resource_version)
    for pod in listing.items:
        name, namespace = str(pod.metadata.name), str(pod.metadata.namespace)
        body = client.V1Eviction(metadata=client.V1ObjectMeta(name=name, namespace=namespace))
        core.create_namespaced_pod_eviction(name, namespace, body)
        version = _wait_gone(core, namespace, name, version)
    return len(listing.items)


def _wait_gone(core: Any, namespace: str, name: str, version: str) -> str:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        stream = watch.Watch()
        for event in stream.stream(
            core.list_namespaced_pod,
            namespace,
            field_selector=f"metadata.name={name}",
            resource_version=version,
            timeout_seconds=30,
        ):
            version = event["object"].metadata.resource_version
            if event["type"] == "DELETED":
                stream.stop()
                return str(version)
    raise TimeoutError(f"{namespace}/{name} still there after {DEADLINE:.0f} s")


def _populate(cluster: Cluster, node: str, pods: int) -> None:
    cluster.add_node(NodeSpec(node))
    for i in range(pods):
        cluster.add_pod(node, f"{node}-pod-{i}", labels={"app": node}, owner_kind="ReplicaSet")


def run(sizes: Sizes) -> Result:
    runs = sizes.repeats + sizes.baseline_repeats
    with World(pod_grace_seconds=sizes.grace) as world, tempfile.TemporaryDirectory() as tmp:
        sim = world.add_cluster(
            "src", version="v1.31.2", nodes=[NodeSpec("src-cp", role="control-plane")]
        )
        nodes = [f"node-{i}" for i in range(1, runs + 1)]
        for node in nodes:
            _populate(sim, node, sizes.pods)
        cluster = ClusterRegistry(settings_for(world, Path(tmp), "redis://unused")).get("src")
        cluster.version()  # warm up: connection, client classes
        parallel, requests = [], []
        for node in nodes[: sizes.repeats]:
            sim.reset_requests()
            started = time.perf_counter()
            outcome = drain.drain(
                cluster, node, deadline=time.time() + DEADLINE, progress=lambda *_: None
            )
            parallel.append(time.perf_counter() - started)
            requests.append(len(sim.requests))
            if not outcome.done or outcome.evicted != sizes.pods:
                raise RuntimeError(f"joinops drain of {node}: {outcome}")
        serial = []
        for node in nodes[sizes.repeats :]:
            started = time.perf_counter()
            if one_at_a_time(cluster, node) != sizes.pods:
                raise RuntimeError(f"baseline drain of {node}: wrong pod count")
            serial.append(time.perf_counter() - started)
            if sim.pods(node=node):
                raise RuntimeError(f"baseline drain of {node} left pods behind")
    ours, theirs = median(parallel), median(serial)
    return Result(
        "drain",
        "Drain",
        params={
            "pods": sizes.pods,
            "grace_seconds": sizes.grace,
            "repeats": sizes.repeats,
            "baseline_repeats": sizes.baseline_repeats,
        },
        samples={"joinops_seconds": parallel, "baseline_seconds": serial, "requests": requests},
        figures=[
            Figure(
                f"drain {sizes.pods} pods, {sizes.grace:g} s grace (median of {sizes.repeats})",
                ours,
                "s",
                f"one at a time: {theirs:.1f} s (median of {sizes.baseline_repeats}); "
                f"floor: one grace, {sizes.grace:g} s",
                f"{ours / sizes.grace:.1f} graces",
            ),
            Figure(
                "speed-up over one at a time",
                theirs / ours,
                "x",
                f"ideal: {sizes.pods}x (all pods in one grace period)",
                "",
            ),
            Figure(
                "overhead over one grace period",
                (ours - sizes.grace) * 1000,
                "ms",
                "performance.md floor on a real API server: 1.6 s over a 2 s grace "
                "(3.6 s); kubectl drain 22 s",
                "",
            ),
        ],
    )
