"""RBAC answers and injected faults, as the official client sees them."""

from __future__ import annotations

import time

import pytest
import urllib3
from ksim_support import Apis, apis_for, body
from kubernetes import client

from kubesim import Cluster, World

USER = "system:serviceaccount:joinops:joinops"


def test_denied_verb_is_the_real_403(apis: Apis, cluster_a: Cluster) -> None:
    cluster_a.rbac.deny("get", "nodes")
    with pytest.raises(client.ApiException) as err:
        apis.core.read_node("a-w-1")
    assert err.value.status == 403
    assert body(err.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'nodes "a-w-1" is forbidden: User "{USER}" cannot get resource "nodes" in '
        'API group "" at the cluster scope',
        "reason": "Forbidden",
        "details": {"name": "a-w-1", "kind": "nodes"},
        "code": 403,
    }
    assert [n.metadata.name for n in apis.core.list_node().items]  # list is still allowed


def test_rules_with_resource_names_and_namespaces(apis: Apis, cluster_a: Cluster) -> None:
    cluster_a.add_pod("a-w-1", "web")
    cluster_a.rbac.set_rules(
        [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"], "resourceNames": ["a-w-1"]}],
        namespace_rules={
            "default": [{"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]}]
        },
    )
    assert apis.core.read_node("a-w-1").metadata.name == "a-w-1"
    with pytest.raises(client.ApiException) as err:
        apis.core.list_node()
    assert body(err.value)["message"] == (
        f'nodes is forbidden: User "{USER}" cannot list resource "nodes" in API group "" at the '
        "cluster scope"
    )
    with pytest.raises(client.ApiException) as err:
        apis.core.read_namespaced_pod("web", "default")
    assert body(err.value)["message"] == (
        f'pods "web" is forbidden: User "{USER}" cannot get resource "pods" in API group "" in '
        'the namespace "default"'
    )
    with pytest.raises(client.ApiException) as err:
        apis.policy.read_namespaced_pod_disruption_budget("pdb", "default")
    assert body(err.value)["message"].startswith('poddisruptionbudgets.policy "pdb" is forbidden')
    assert body(err.value)["details"] == {
        "name": "pdb",
        "group": "policy",
        "kind": "poddisruptionbudgets",
    }
    eviction = client.V1Eviction(metadata=client.V1ObjectMeta(name="web", namespace="default"))
    apis.core.create_namespaced_pod_eviction("web", "default", eviction)  # allowed by the Role
    cluster_a.rbac.set_rules(None)
    apis.core.list_node()


def test_eviction_denied_names_the_subresource(apis: Apis, cluster_a: Cluster) -> None:
    cluster_a.add_pod("a-w-1", "web")
    cluster_a.rbac.deny("create", "pods/eviction", namespace="default")
    eviction = client.V1Eviction(metadata=client.V1ObjectMeta(name="web", namespace="default"))
    with pytest.raises(client.ApiException) as err:
        apis.core.create_namespaced_pod_eviction("web", "default", eviction)
    assert body(err.value)["message"] == (
        f'pods "web" is forbidden: User "{USER}" cannot create resource "pods/eviction" in API '
        'group "" in the namespace "default"'
    )


def test_error_on_the_nth_matching_call(apis: Apis, cluster_a: Cluster) -> None:
    cluster_a.faults.add(status=500, nth=2, path_contains="/nodes", times=1)
    apis.core.list_node()
    with pytest.raises(client.ApiException) as err:
        apis.core.list_node()
    assert err.value.status == 500 and body(err.value)["reason"] == "InternalError"
    apis.core.list_node()
    assert [r.status for r in cluster_a.requests] == [200, 500, 200]


def test_throttling_answers_429_with_retry_after(apis: Apis, cluster_a: Cluster) -> None:
    cluster_a.faults.add(status=429, path_contains="/configmaps", method="POST", retry_after=3)
    cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c"))
    with pytest.raises(client.ApiException) as err:
        apis.core.create_namespaced_config_map("default", cm)
    assert err.value.status == 429 and err.value.headers["Retry-After"] == "3"
    assert body(err.value)["reason"] == "TooManyRequests"
    assert body(err.value)["details"] == {"retryAfterSeconds": 3}
    apis.core.create_namespaced_config_map("default", cm)


def test_client_retries_reads_that_say_retry_after(apis: Apis, cluster_a: Cluster) -> None:
    # urllib3 under the official client honours Retry-After on 429/503 for GETs by itself
    cluster_a.faults.add(status=503, path_contains="/nodes", retry_after=1)
    cluster_a.reset_requests()
    assert apis.core.list_node().items
    assert [r.status for r in cluster_a.requests] == [503, 200]


def test_latency(apis: Apis, cluster_a: Cluster) -> None:
    slow = cluster_a.faults.add(latency_seconds=0.2, path_contains="/version", times=None)
    started = time.monotonic()
    client.VersionApi(apis.raw).get_code()
    assert time.monotonic() - started >= 0.2  # a lower bound: no machine is too slow for it
    apis.core.list_node()
    assert slow.fired == 1  # the node list was not delayed: only /version matched


def test_unreachable_then_back_on_the_same_port(world: World, cluster_a: Cluster) -> None:
    apis = apis_for(cluster_a)
    apis.core.list_node()
    port = cluster_a.port
    cluster_a.faults.add(reachable=False)
    assert not cluster_a.reachable
    cfg = apis.raw.configuration
    cfg.retries = 0
    raw = client.ApiClient(cfg)
    with pytest.raises(urllib3.exceptions.MaxRetryError) as err:
        client.CoreV1Api(raw).list_node()
    assert "refused" in str(err.value).lower()
    cluster_a.faults.add(reachable=True)
    assert cluster_a.port == port
    assert [n.metadata.name for n in apis_for(cluster_a).core.list_node().items]
