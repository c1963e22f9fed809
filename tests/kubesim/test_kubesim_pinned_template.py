"""A ReplicaSet whose pod template names a node (`spec.nodeName`) puts its pods there even when
the node is cordoned, as in a real cluster: the ReplicaSet controller creates a replacement as
soon as a pod is marked for deletion (terminating pods do not count as active), the scheduler
never sees a pod that already names its node (so the cordon, a scheduling filter, does not
apply), and the node's kubelet runs whatever is bound to it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from kubesim import Cluster, NodeSpec, World

NODE = "a-w-1"
LABELS = {"app": "pinned"}


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    # a long grace: the evicted pod is still Terminating when its replacement runs
    with World(pod_grace_seconds=60, pod_start_seconds=0.02) as world:
        yield world.add_cluster(
            "clusterA", nodes=[NodeSpec("a-cp-1", role="control-plane"), NodeSpec(NODE)]
        )
        assert world.internal_errors == []


def pinned(replicas: int) -> dict[str, Any]:
    return {
        "metadata": {"name": "pinned"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": LABELS},
            "template": {
                "metadata": {"labels": LABELS},
                "spec": {"nodeName": NODE, "containers": [{"name": "c", "image": "nginx:1.27"}]},
            },
        },
    }


def running(cluster: Cluster) -> list[dict[str, Any]]:
    return [
        p
        for p in cluster.pods(node=NODE)
        if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")
    ]


def test_replacements_land_on_the_cordoned_node_the_template_names(cluster: Cluster) -> None:
    raw = cluster.api_client()
    core, apps = client.CoreV1Api(raw), client.AppsV1Api(raw)
    core.patch_node(NODE, {"spec": {"unschedulable": True}})
    apps.create_namespaced_replica_set("default", pinned(2))
    cluster.wait_for(lambda: len(running(cluster)) == 2)
    victim = running(cluster)[0]["metadata"]["name"]
    core.create_namespaced_pod_eviction(
        victim, "default", client.V1Eviction(metadata=client.V1ObjectMeta(name=victim))
    )
    cluster.wait_for(
        lambda: (
            len(running(cluster)) == 2
            and victim not in {p["metadata"]["name"] for p in running(cluster)}
        )
    )
    old = cluster.pod("default", victim)
    assert old is not None and old["metadata"]["deletionTimestamp"]  # still terminating
    assert {p["spec"]["nodeName"] for p in running(cluster)} == {NODE}
    assert core.read_node(NODE).spec.unschedulable is True
