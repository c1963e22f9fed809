"""Every kind the server returns deserialises with the client's typed models (37)."""

from __future__ import annotations

import json

import pytest
import urllib3
from ksim_support import Apis, body
from kubernetes import client

from kubesim import Cluster, World


def raw_request(
    cluster: Cluster, method: str, path: str, data: bytes | None = None
) -> tuple[int, dict]:
    http = urllib3.PoolManager(ca_certs=cluster.ca_file)
    resp = http.request(
        method,
        cluster.server + path,
        body=data,
        headers={"Authorization": f"Bearer {cluster.token}", "Content-Type": "application/json"},
    )
    return resp.status, json.loads(resp.data)


def test_every_kind_reads_typed(world: World, apis: Apis, cluster_a: Cluster) -> None:
    cluster_a.add_pod("a-w-1", "running", labels={"app": "a"})
    cluster_a.add_pod("a-w-1", "done", phase="Succeeded")
    cluster_a.add_pod("a-w-1", "failed", phase="Failed")
    cluster_a.add_pod(
        "a-w-1", "ds-pod", owner_kind="DaemonSet", owner_name="kube-proxy", namespace="kube-system"
    )
    cluster_a.add_pod("a-w-1", "rs-pod", owner_kind="ReplicaSet", owner_name="web-5d9")
    # kube-apiserver-a-cp-1: a control plane's static pods are mirrored from the start
    cluster_a.add_pod("a-w-2", "scratch", empty_dir=True)
    cluster_a.stop_kubelet("a-w-2")
    apis.core.delete_namespaced_pod("scratch", "default")  # stays Terminating
    cluster_a.add_pdb("a", "default", {"app": "a"}, min_available=1)
    apis.core.create_node(client.V1Node(metadata=client.V1ObjectMeta(name="bare")))

    pods = apis.core.list_pod_for_all_namespaces().items
    phases = {p.metadata.name: p.status.phase for p in pods}
    assert phases["done"] == "Succeeded" and phases["failed"] == "Failed"
    mirror = next(p for p in pods if p.metadata.name == "kube-apiserver-a-cp-1")
    assert "kubernetes.io/config.mirror" in mirror.metadata.annotations
    ds_pod = next(p for p in pods if p.metadata.name == "ds-pod")
    assert ds_pod.metadata.owner_references[0].kind == "DaemonSet"
    scratch = next(p for p in pods if p.metadata.name == "scratch")
    assert scratch.metadata.deletion_timestamp and scratch.spec.volumes[0].empty_dir is not None

    nodes = {n.metadata.name: n for n in apis.core.list_node().items}
    assert {c.type: c.status for c in nodes["a-w-2"].status.conditions}["Ready"] == "Unknown"
    assert nodes["bare"].spec.taints[0].key == "node.kubernetes.io/not-ready"
    assert nodes["bare"].status.node_info.kubelet_version == ""

    assert apis.core.list_namespace().items
    assert apis.core.list_secret_for_all_namespaces() is not None
    assert apis.core.list_config_map_for_all_namespaces().items
    pdbs = apis.policy.list_pod_disruption_budget_for_all_namespaces().items
    assert pdbs[0].status.disruptions_allowed == 0
    assert pdbs[0].status.conditions[0].reason == "InsufficientPods"
    assert (
        apis.apps.read_namespaced_daemon_set("kube-proxy", "kube-system").status.number_ready == 0
    )
    assert apis.apps.list_replica_set_for_all_namespaces().items[0].spec.replicas == 1
    leases = client.CoordinationV1Api(apis.raw)
    lease = client.V1Lease(
        metadata=client.V1ObjectMeta(name="joinops-lock"),
        spec=client.V1LeaseSpec(holder_identity="worker-1"),
    )
    leases.create_namespaced_lease("default", lease)
    assert (
        leases.read_namespaced_lease("joinops-lock", "default").spec.holder_identity == "worker-1"
    )


def test_method_not_allowed_and_bad_request(apis: Apis, cluster_a: Cluster) -> None:
    cluster_a.add_pod("a-w-1", "web")
    status, answer = raw_request(cluster_a, "GET", "/api/v1/namespaces/default/pods/web/eviction")
    assert status == 405 and answer["reason"] == "MethodNotAllowed"
    status, answer = raw_request(
        cluster_a, "POST", "/api/v1/namespaces/default/configmaps", b"{not json"
    )
    assert status == 400 and answer["reason"] == "BadRequest"
    status, answer = raw_request(cluster_a, "GET", "/apis/policy/v1/nothings")
    assert status == 404 and answer["reason"] == "NotFound"
    eviction = client.V1Eviction(metadata=client.V1ObjectMeta(name="other"))
    with pytest.raises(client.ApiException) as err:
        apis.core.create_namespaced_pod_eviction("web", "default", eviction)
    assert err.value.status == 400
    assert body(err.value)["message"] == "name in URL does not match name in Eviction object"
    with pytest.raises(client.ApiException) as err:
        apis.core.read_namespaced_pod("ghost", "default")
    assert body(err.value)["reason"] == "NotFound"


def test_status_subresources(apis: Apis, cluster_a: Cluster) -> None:
    ns = apis.core.read_namespace_status("default")
    assert ns.status.phase == "Active"
    node = apis.core.patch_node_status(
        "a-w-1", {"status": {"conditions": [{"type": "Ready", "status": "False"}]}}
    )
    assert {c.type: c.status for c in node.status.conditions}["Ready"] == "False"
    assert {c.type for c in node.status.conditions} >= {"MemoryPressure", "DiskPressure"}
    assert apis.core.patch_node("a-w-1", {"status": {"phase": "x"}}).status.phase is None
