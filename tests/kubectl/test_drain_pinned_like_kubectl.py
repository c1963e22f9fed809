"""The real `kubectl drain` (v1.37) and joinops's drain on the same simulated cluster, on two
nodes alike: each carries the pods of a ReplicaSet whose template names the node (its
replacements land there again, cordon or not) and one other pod. Both evict exactly the pods
listed at the start, once each, and end without waiting for (or evicting) the replacements:
kubectl's `waitForDelete` follows the listed UIDs only, and so does joinops's plan, across the
slices of a drain as well."""

from __future__ import annotations

import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from joinops.clusters.kube import KubeCluster
from kubesim import Cluster, NodeSpec, World
from kubesim.kubectl_binary import kubectl_path
from workers import drain


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    with World(pod_grace_seconds=0.05, pdb_sync_seconds=0.01, pod_start_seconds=0.02) as world:
        yield world.add_cluster(
            "clusterA",
            nodes=[NodeSpec("cp", role="control-plane"), NodeSpec("by-kubectl"), NodeSpec("ours")],
        )
        assert world.internal_errors == []


def pinned_replicaset(node: str, replicas: int) -> dict[str, Any]:
    labels = {"app": f"pinned-{node}"}
    return {
        "metadata": {"name": f"pinned-{node}"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx:1.27"}]},
            },
        },
    }


def running_on(cluster: Cluster, node: str) -> list[str]:
    return sorted(
        p["metadata"]["name"]
        for p in cluster.pods(node=node)
        if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")
    )


def populate(cluster: Cluster, node: str) -> list[str]:
    """Three pinned pods and one other pod on `node`; their names."""
    apps = client.AppsV1Api(cluster.api_client())
    apps.create_namespaced_replica_set("default", pinned_replicaset(node, 3))
    cluster.add_pod(node, f"other-{node}", owner_kind="ReplicaSet")
    cluster.wait_for(lambda: len(running_on(cluster, node)) == 4)
    return running_on(cluster, node)


def replacements(cluster: Cluster, node: str, listed: list[str]) -> list[str]:
    return [name for name in running_on(cluster, node) if name not in listed]


def evictions_on(cluster: Cluster, node: str) -> Counter[str]:
    return Counter(
        r.name for r in cluster.requests if r.subresource == "eviction" and node in r.name
    )


def test_kubectl_and_joinops_evict_the_same_listed_pods_once_each(
    cluster: Cluster, tmp_path: Path
) -> None:
    listed = {node: populate(cluster, node) for node in ("by-kubectl", "ours")}
    kubeconfig = cluster.write_kubeconfig(tmp_path / "kubeconfig")
    base = [str(kubectl_path()), "--kubeconfig", str(kubeconfig), "--cache-dir", str(tmp_path)]
    done = subprocess.run(
        [*base, "drain", "by-kubectl", "--ignore-daemonsets", "--timeout=60s"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("node/by-kubectl drained")

    kube = KubeCluster("clusterA", cluster.api_client(), timeout_seconds=5)
    drain.cordon(kube, "ours")
    # two slices, as a drain longer than `timeouts.recheck` runs: the first lists and evicts,
    # then gives up at once; the second carries on with the first one's plan
    first = drain.drain(kube, "ours", deadline=time.time(), progress=lambda *_: None)
    assert first.plan.total == 4
    cluster.wait_for(lambda: len(replacements(cluster, "ours", listed["ours"])) == 3)
    second = drain.drain(
        kube, "ours", deadline=time.time() + 60, progress=lambda *_: None, plan=first.plan
    )
    assert second.done

    for node in ("by-kubectl", "ours"):
        assert evictions_on(cluster, node) == Counter(listed[node])  # each listed pod, once
        # put back on the node by the template, running there, never evicted
        assert len(replacements(cluster, node, listed[node])) == 3
    assert set(second.plan.appeared) == {"ReplicaSet default/pinned-ours"}
