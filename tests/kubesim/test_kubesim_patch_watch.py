"""Patches (merge, strategic, JSON) on nodes, and watches through kubernetes.watch."""

from __future__ import annotations

import pytest
from ksim_support import Apis, body
from kubernetes import client, watch

from kubesim import Cluster, World

UNSCHEDULABLE = "node.kubernetes.io/unschedulable"


def taint_keys(node: dict) -> list[str]:
    return [t["key"] for t in node["spec"].get("taints") or []]


def test_cordon_with_strategic_merge_patch(apis: Apis, cluster_a: Cluster) -> None:
    node = apis.core.patch_node("a-w-1", {"spec": {"unschedulable": True}})
    assert node.spec.unschedulable is True
    cluster_a.wait_for(lambda: UNSCHEDULABLE in taint_keys(cluster_a.node("a-w-1")))
    cordoned = apis.core.list_node(field_selector="spec.unschedulable=true")
    assert [n.metadata.name for n in cordoned.items] == ["a-w-1"]
    apis.core.patch_node("a-w-1", {"spec": {"unschedulable": None}})
    cluster_a.wait_for(lambda: UNSCHEDULABLE not in taint_keys(cluster_a.node("a-w-1")))
    assert "unschedulable" not in cluster_a.node("a-w-1")["spec"]


def test_merge_patch_labels_and_stale_resource_version(apis: Apis, cluster_a: Cluster) -> None:
    merge = "application/merge-patch+json"
    before = apis.core.read_node("a-w-2")
    node = apis.core.patch_node(
        "a-w-2", {"metadata": {"labels": {"joinops/moved": "yes"}}}, _content_type=merge
    )
    assert node.metadata.labels["joinops/moved"] == "yes"
    assert node.metadata.labels["kubernetes.io/hostname"] == "a-w-2"
    stale = {
        "metadata": {"resourceVersion": before.metadata.resource_version, "labels": {"x": "y"}}
    }
    with pytest.raises(client.ApiException) as err:
        apis.core.patch_node("a-w-2", stale, _content_type=merge)
    assert err.value.status == 409 and body(err.value)["reason"] == "Conflict"
    node = apis.core.patch_node(
        "a-w-2", {"metadata": {"labels": {"joinops/moved": None}}}, _content_type=merge
    )
    assert "joinops/moved" not in node.metadata.labels


def test_json_patch(apis: Apis) -> None:
    ops = [
        {"op": "add", "path": "/spec/taints", "value": [{"key": "drain", "effect": "NoSchedule"}]},
        {"op": "add", "path": "/metadata/labels/team", "value": "infra"},
    ]
    node = apis.core.patch_node("a-w-1", ops)
    assert [t.key for t in node.spec.taints] == ["drain"]
    assert node.metadata.labels["team"] == "infra"
    with pytest.raises(client.ApiException) as err:
        apis.core.patch_node(
            "a-w-1", [{"op": "test", "path": "/metadata/labels/team", "value": "x"}]
        )
    assert err.value.status == 422


def test_strategic_patch_merges_containers_by_name(apis: Apis, cluster_a: Cluster) -> None:
    cluster_a.add_pod("a-w-1", "web", labels={"app": "web"})
    pod = apis.core.patch_namespaced_pod(
        "web",
        "default",
        {
            "metadata": {"labels": {"tier": "front"}},
            "spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]},
        },
    )
    assert [(c.name, c.image) for c in pod.spec.containers] == [("main", "nginx:1.27")]
    assert pod.metadata.labels == {"app": "web", "tier": "front"}
    assert pod.metadata.generation == 2


def test_watch_sees_a_pod_terminate_then_go(apis: Apis, cluster_a: Cluster) -> None:
    cluster_a.add_pod("a-w-1", "web", labels={"app": "web"})
    cluster_a.add_pod("a-w-1", "other", labels={"app": "other"})
    seen = []
    w = watch.Watch()
    for event in w.stream(
        apis.core.list_namespaced_pod, "default", label_selector="app=web", timeout_seconds=5
    ):
        pod = event["object"]
        seen.append((event["type"], pod.metadata.name, pod.metadata.deletion_timestamp is not None))
        if event["type"] == "ADDED":
            apis.core.delete_namespaced_pod("web", "default")
        if event["type"] == "DELETED":
            w.stop()
    # as recorded from a real API server: the kubelet's final grace-0 DELETE first updates the
    # Terminating pod (MODIFIED, grace 0), then removes it (DELETED)
    assert seen == [
        ("ADDED", "web", False),
        ("MODIFIED", "web", True),
        ("MODIFIED", "web", True),
        ("DELETED", "web", True),
    ]


def test_watch_from_a_list_resource_version(apis: Apis, cluster_a: Cluster, world: World) -> None:
    cluster_a.add_pod("a-w-1", "a")
    listed = apis.core.list_namespaced_pod("default")
    cluster_a.add_pod("a-w-2", "b")
    apis.core.delete_namespaced_pod("a", "default", grace_period_seconds=0)
    events = []
    stream = watch.Watch()
    for event in stream.stream(
        apis.core.list_namespaced_pod,
        "default",
        resource_version=listed.metadata.resource_version,
        timeout_seconds=5,
    ):
        events.append((event["type"], event["object"].metadata.name))
        if len(events) == 2:
            stream.stop()
    assert events == [("ADDED", "b"), ("DELETED", "a")]


def test_watch_nodes_with_field_selector(apis: Apis, cluster_a: Cluster) -> None:
    w = watch.Watch()
    types = []
    for event in w.stream(
        apis.core.list_node, field_selector="metadata.name=a-w-2", timeout_seconds=5
    ):
        types.append((event["type"], event["object"].metadata.name))
        if len(types) == 1:
            cluster_a.stop_kubelet("a-w-1")
            cluster_a.stop_kubelet("a-w-2")
        elif event["type"] == "MODIFIED":
            assert {c.type: c.status for c in event["object"].status.conditions}[
                "Ready"
            ] == "Unknown"
            w.stop()
    assert types == [("ADDED", "a-w-2"), ("MODIFIED", "a-w-2")]


def test_watch_from_a_compacted_resource_version_is_410(monkeypatch: pytest.MonkeyPatch) -> None:
    import kubesim.store

    monkeypatch.setattr(kubesim.store, "HISTORY", 5)
    with World() as world:
        cluster = world.add_cluster("small")
        core = client.CoreV1Api(cluster.api_client())
        old = core.list_namespaced_config_map("default").metadata.resource_version
        for i in range(10):
            cluster.add_configmap("default", f"c-{i}", {})
        with pytest.raises(client.ApiException) as err:
            list(
                watch.Watch().stream(
                    core.list_namespaced_config_map,
                    "default",
                    resource_version=old,
                    timeout_seconds=2,
                )
            )
        assert err.value.status == 410 and "too old resource version" in err.value.reason
