"""Check cost vs cluster size: what one `rules.check` asks of the two API servers.

Measured: API requests and bytes the API servers sent back for one check of a control-plane move
(the costliest ask: it also reads the control planes and the last-control-plane rule), and of a
worker move (a DaemonSet pod and a ReplicaSet pod on the node), with the source and the target
each holding N nodes and N pods running on the source's other nodes. Compared against the same
check at the smallest size (it must be flat) and against what listing the source's nodes once
would cost at that size (what a check that read every node would pay at least).

At the largest size (`Sizes.large`: 5,000 nodes and 150,000 pods, 2,000 PersistentVolumes) the
worker move is measured once more with a claim on the node, so the check also reads every
PersistentVolume and DaemonSet: in pages of 500 (`joinops/clusters/pages.py`), the node's pods
from the watch cache. Its requests, pages and bytes are reported.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.report import Figure, Result
from bench.support import median, settings_for
from joinops.clusters.registry import ClusterRegistry
from joinops.requests.asks import MigrationAsk
from joinops.requests.model import Role
from joinops.rules.check import check
from kubesim import Cluster, NodeSpec, World, workload_objects
from kubesim.resources import PERSISTENTVOLUMES

FLAT_BYTES = 1.2  # bytes may grow by this factor (counts get more digits), requests not at all


@dataclass(frozen=True)
class Large:
    nodes: int  # in the source
    pods: int  # in the source, DaemonSet pods on every node included
    volumes: int  # PersistentVolumes, bound
    daemonsets: int = 3  # each with a pod on every node


@dataclass(frozen=True)
class Sizes:
    nodes: tuple[int, ...]  # nodes per cluster (source and target each)
    repeats: int  # checks timed per size (requests and bytes are the same every time)
    large: Large | None = None  # a source as large as a big production cluster


@dataclass(frozen=True)
class PagedCost:
    nodes: int
    pods: int
    volumes: int
    requests: int
    list_pages: int  # list requests (a list of N items is N / 500 pages, rounded up)
    bytes_received: int
    seconds: float
    build_seconds: float  # making the simulated source (not part of the check)
    list_bytes: int  # one unpaged list of the source's nodes


SMALL = Large(nodes=10, pods=40, volumes=10)  # the same check, at a small size


@dataclass(frozen=True)
class Cost:
    nodes: int
    requests: int
    bytes_received: int
    seconds: float  # median wall time of one check, loopback, in-process API servers
    list_bytes: int  # one unpaged list of the source's nodes
    list_seconds: float
    worker_requests: int  # one check of a worker move (src-w-1, two pods on it)
    worker_bytes: int


def measure(nodes: int, repeats: int) -> Cost:
    with World() as world, tempfile.TemporaryDirectory(prefix="bench-check-") as tmp:
        source = world.add_cluster(
            "src", version="v1.31.2", nodes=[NodeSpec("src-cp", role="control-plane")]
        )
        target = world.add_cluster(
            "dst",
            version="v1.31.2",
            control_plane_endpoint="dst:6443",
            nodes=[NodeSpec("dst-cp", role="control-plane")],
            pod_subnet="10.0.0.0/8",  # a /24 per node: room for 65,536 nodes
        )
        source.add_nodes(nodes - 1, prefix="src-w")
        target.add_nodes(nodes - 1, prefix="dst-w")
        # the moved worker carries a DaemonSet pod and a ReplicaSet pod; N pods run elsewhere
        source.add_pod("src-w-1", "agent-x", owner_kind="DaemonSet")
        source.add_pod("src-w-1", "web-0", owner_kind="ReplicaSet")
        for i in range(nodes):
            source.add_pod(
                f"src-w-{2 + i % max(1, nodes - 2)}", f"other-{i}", owner_kind="ReplicaSet"
            )
        registry = ClusterRegistry(settings_for(world, Path(tmp), "redis://unused"))
        ask = MigrationAsk("src-cp", "src", "dst", Role.CONTROL_PLANE)
        src, dst = registry.get("src"), registry.get("dst")
        check(ask, src, dst)  # warm up: connections, the client's model classes
        times = []
        for _ in range(repeats):
            _reset(source, target)
            started = time.perf_counter()
            verdict = check(ask, src, dst)
            times.append(time.perf_counter() - started)
        records = source.requests + target.requests
        codes = [f.code for f in verdict.findings]
        if codes != ["last-control-plane", "etcd-even"]:
            raise RuntimeError(f"unexpected findings at {nodes} nodes: {codes}")
        _reset(source, target)
        worker = check(MigrationAsk("src-w-1", "src", "dst", Role.WORKER), src, dst)
        if not worker.allowed:
            raise RuntimeError(f"worker move refused at {nodes} nodes: {worker.findings}")
        worker_records = source.requests + target.requests
        _reset(source, target)
        started = time.perf_counter()
        src.call("list", "nodes", src.core.list_node)
        list_seconds = time.perf_counter() - started
        return Cost(
            nodes=nodes,
            requests=len(records),
            bytes_received=sum(r.bytes_out for r in records),
            seconds=median(times),
            list_bytes=sum(r.bytes_out for r in source.requests),
            list_seconds=list_seconds,
            worker_requests=len(worker_records),
            worker_bytes=sum(r.bytes_out for r in worker_records),
        )


def measure_large(size: Large) -> PagedCost:
    started = time.perf_counter()
    with World() as world, tempfile.TemporaryDirectory(prefix="bench-check-") as tmp:
        source = world.add_cluster(
            "src", version="v1.31.2", nodes=[NodeSpec("src-cp", role="control-plane")]
        )
        target = world.add_cluster(
            "dst",
            version="v1.31.2",
            control_plane_endpoint="dst:6443",
            nodes=[NodeSpec("dst-cp", role="control-plane")],
        )
        names = source.add_nodes(size.nodes - 1, prefix="src-w")
        _fill(source, names, size)
        build_seconds = time.perf_counter() - started
        registry = ClusterRegistry(settings_for(world, Path(tmp), "redis://unused"))
        src, dst = registry.get("src"), registry.get("dst")
        ask = MigrationAsk("src-w-1", "src", "dst", Role.WORKER)
        check(ask, src, dst)  # warm up: connections, the client's model classes
        _reset(source, target)
        started = time.perf_counter()
        verdict = check(ask, src, dst)
        seconds = time.perf_counter() - started
        if not verdict.allowed:
            raise RuntimeError(f"worker move refused at {size}: {verdict.findings}")
        records = source.requests + target.requests
        _reset(source, target)
        src.call("list", "nodes", src.core.list_node)
        return PagedCost(
            nodes=size.nodes,
            pods=size.pods,
            volumes=size.volumes,
            requests=len(records),
            list_pages=sum(1 for r in records if r.verb == "list"),
            bytes_received=sum(r.bytes_out for r in records),
            seconds=seconds,
            build_seconds=build_seconds,
            list_bytes=sum(r.bytes_out for r in source.requests),
        )


def _fill(source: Cluster, nodes: list[str], size: Large) -> None:
    """DaemonSet pods on every node, ReplicaSets of 30 pods over the nodes, bound volumes; the
    moved worker (src-w-1) also runs a pod with a claim, so the check reads the volumes."""
    count = 0
    for d in range(size.daemonsets):
        for node in ["src-cp", *nodes]:
            source.add_pod(node, f"agent-{d}-{node}", owner_kind="DaemonSet", owner_name=f"ds-{d}")
            count += 1
    for i in range(size.pods - count - 1):
        node = nodes[i % len(nodes)]
        source.add_pod(node, f"web-{i}", owner_kind="ReplicaSet", owner_name=f"web-{i // 30}")
    claim = {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data-0"}}]}
    source.add_pod("src-w-1", "db-0", owner_kind="ReplicaSet", owner_name="db", spec=claim)
    with source.lock:
        for v in range(size.volumes):
            volume = workload_objects.default_persistent_volume(
                {
                    "apiVersion": "v1",
                    "kind": "PersistentVolume",
                    "metadata": {"name": f"pv-{v:05d}"},
                    "spec": {
                        "capacity": {"storage": "1Gi"},
                        "accessModes": ["ReadWriteOnce"],
                        "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": f"vol-{v}"},
                        "claimRef": {"namespace": "default", "name": f"data-{v}"},
                    },
                    "status": {"phase": "Bound"},
                }
            )
            source.store.create(PERSISTENTVOLUMES, volume)


def _reset(*clusters: Cluster) -> None:
    for cluster in clusters:
        cluster.reset_requests()


def run(sizes: Sizes) -> Result:
    costs = [measure(n, sizes.repeats) for n in sizes.nodes]
    large = measure_large(sizes.large) if sizes.large else None
    small = measure_large(SMALL) if sizes.large else None
    smallest = costs[0]
    result = Result(
        "check_cost",
        "Check cost vs cluster size",
        params={
            "nodes_per_cluster": list(sizes.nodes),
            "ask": "control plane src-cp from src to dst (both clusters N nodes)",
            "repeats": sizes.repeats,
            "large": sizes.large.__dict__ if sizes.large else None,
        },
        samples={
            "costs": [c.__dict__ for c in costs],
            "large": large.__dict__ if large else None,
            "large_at_small_size": small.__dict__ if small else None,
        },
    )
    if large is not None and small is not None:
        result.figures.append(
            Figure(
                f"requests / bytes received per check of a worker move, {large.nodes:,} nodes "
                f"and {large.pods:,} pods",
                large.requests,
                "requests",
                f"{large.bytes_received:,} B received; {large.list_pages} list requests "
                f"(every PersistentVolume and DaemonSet, in pages of 500; the node's pods from "
                f"the watch cache); {large.seconds * 1000:.0f} ms; at {small.nodes} nodes and "
                f"{small.pods} pods: {small.requests} requests, {small.bytes_received:,} B; one "
                f"list of the nodes: {large.list_bytes:,} B; source built in "
                f"{large.build_seconds:.0f} s",
                "",
            )
        )
    for cost in costs:
        flat = cost.requests == smallest.requests and (
            cost.bytes_received <= smallest.bytes_received * FLAT_BYTES
        )
        result.figures.append(
            Figure(
                f"requests / bytes received per check, {cost.nodes:,} nodes",
                cost.requests,
                "requests",
                f"{cost.bytes_received:,} B received; at {smallest.nodes:,} nodes: "
                f"{smallest.requests} requests, {smallest.bytes_received:,} B; "
                f"one list of the nodes: {cost.list_bytes:,} B",
                "flat" if flat else "NOT FLAT",
            )
        )
    largest = costs[-1]
    result.figures.append(
        Figure(
            f"time per check, {largest.nodes:,} nodes (median of {sizes.repeats})",
            largest.seconds * 1000,
            "ms",
            f"{smallest.nodes:,} nodes: {smallest.seconds * 1000:.1f} ms; "
            f"one list of {largest.nodes:,} nodes: {largest.list_seconds * 1000:.0f} ms",
            "flat" if largest.seconds < max(smallest.seconds * 2, 0.05) else "grows",
        )
    )
    return result
