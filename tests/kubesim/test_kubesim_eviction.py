"""Evictions and disruption budgets, graceful deletion and the kubelet finishing pods."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from ksim_support import Apis, apis_for, body, standard_cluster
from kubernetes import client, watch

from kubesim import Cluster, NodeSpec, World

BLOCKED = "Cannot evict pod as it would violate the pod's disruption budget."


def evict(apis: Apis, name: str, namespace: str = "default") -> client.V1Eviction:
    eviction = client.V1Eviction(metadata=client.V1ObjectMeta(name=name, namespace=namespace))
    return apis.core.create_namespaced_pod_eviction(name, namespace, eviction)


def status_of(apis: Apis, name: str, namespace: str = "default") -> int:
    try:
        evict(apis, name, namespace)
    except client.ApiException as err:
        return int(err.status)
    return 201


def test_pending_pods_ignore_budgets(apis: Apis, cluster_a: Cluster) -> None:
    cluster_a.stop_kubelet("a-w-1")
    cluster_a.add_pod("a-w-1", "waiting", labels={"app": "web"}, phase="Pending")
    cluster_a.add_pdb("web", "default", {"app": "web"}, min_available=1)
    evict(apis, "waiting")
    pod = cluster_a.pod("default", "waiting")
    assert pod["metadata"]["deletionTimestamp"]  # its kubelet is stopped: stays Terminating
    assert cluster_a.pdb("default", "web")["status"].get("disruptedPods") is None


def test_blocked_eviction_then_allowed_when_another_pod_is_healthy(
    apis: Apis, cluster_a: Cluster
) -> None:
    for i in (1, 2):
        cluster_a.add_pod("a-w-1", f"web-{i}", labels={"app": "web"})
    cluster_a.add_pdb("web", "default", {"app": "web"}, min_available=2)
    with pytest.raises(client.ApiException) as err:
        evict(apis, "web-1")
    assert err.value.status == 429
    assert body(err.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": BLOCKED,
        "reason": "TooManyRequests",
        "details": {
            "causes": [
                {
                    "reason": "DisruptionBudget",
                    "message": "The disruption budget web needs 2 healthy pods and has 2 currently",
                }
            ]
        },
        "code": 429,
    }
    cluster_a.add_pod("a-w-2", "web-3", labels={"app": "web"}, phase="Pending")
    cluster_a.wait_for(lambda: cluster_a.pdb("default", "web")["status"]["disruptionsAllowed"] == 1)
    cluster_a.world.pod_grace_seconds = 1.0  # keep web-1 Terminating while the budget is read
    cluster_a.world.pdb_sync_seconds = 1.0  # ... and before the controller recomputes it
    result = evict(apis, "web-1")
    assert result.metadata is not None
    pdb = cluster_a.pdb("default", "web")["status"]  # decremented by the API server at once
    assert pdb["disruptionsAllowed"] == 0 and "web-1" in pdb["disruptedPods"]
    evicted = cluster_a.pod("default", "web-1")
    assert evicted["metadata"]["deletionTimestamp"]
    assert {c["type"]: c.get("reason") for c in evicted["status"]["conditions"]}[
        "DisruptionTarget"
    ] == "EvictionByEvictionAPI"
    cluster_a.wait_for(lambda: cluster_a.pod("default", "web-1") is None)
    assert status_of(apis, "web-2") == 429


@pytest.fixture
def slow_sync() -> Iterator[Cluster]:
    """A disruption controller slow enough for a test to see a budget being processed."""
    with World(pdb_sync_seconds=0.3) as world:
        yield standard_cluster(world)


def test_budget_change_is_processing_then_allows(slow_sync: Cluster) -> None:
    cluster_a, apis = slow_sync, apis_for(slow_sync)
    for i in (1, 2):
        cluster_a.add_pod("a-w-1", f"db-{i}", labels={"app": "db"})
    cluster_a.add_pdb("db", "default", {"app": "db"}, min_available=2)
    assert status_of(apis, "db-1") == 429
    apis.policy.patch_namespaced_pod_disruption_budget(
        "db", "default", {"spec": {"minAvailable": 1}}
    )
    with pytest.raises(client.ApiException) as err:
        evict(apis, "db-1")
    status = body(err.value)
    assert err.value.status == 429 and status["message"] == BLOCKED
    assert status["details"]["causes"] == [
        {
            "reason": "DisruptionBudget",
            "message": "The disruption budget db is still being processed by the server.",
        }
    ]
    assert status["details"]["retryAfterSeconds"] == 10 and err.value.headers["Retry-After"] == "10"
    cluster_a.wait_for(lambda: cluster_a.pdb("default", "db")["status"]["observedGeneration"] == 2)
    assert status_of(apis, "db-1") == 201


def test_new_budget_through_the_api_is_processing_first(slow_sync: Cluster) -> None:
    cluster_a, apis = slow_sync, apis_for(slow_sync)
    for i in (1, 2):
        cluster_a.add_pod(
            "a-w-1",
            f"api-{i}",
            labels={"app": "api"},
            owner_kind="ReplicaSet",
            owner_name="api-7f9c",
        )
    pdb = client.V1PodDisruptionBudget(
        metadata=client.V1ObjectMeta(name="api"),
        spec=client.V1PodDisruptionBudgetSpec(
            max_unavailable=1, selector=client.V1LabelSelector(match_labels={"app": "api"})
        ),
    )
    made = apis.policy.create_namespaced_pod_disruption_budget("default", pdb)
    assert made.status.disruptions_allowed == 0 and made.status.observed_generation is None
    with pytest.raises(client.ApiException) as err:
        evict(apis, "api-1")
    assert "still being processed" in body(err.value)["details"]["causes"][0]["message"]
    cluster_a.wait_for(lambda: cluster_a.pdb("default", "api")["status"].get("observedGeneration"))
    synced = apis.policy.read_namespaced_pod_disruption_budget("api", "default").status
    assert (synced.current_healthy, synced.desired_healthy, synced.expected_pods) == (2, 1, 2)
    assert synced.disruptions_allowed == 1
    assert [(c.type, c.status) for c in synced.conditions] == [("DisruptionAllowed", "True")]
    assert status_of(apis, "api-1") == 201


def test_parallel_evictions_spend_the_budget_exactly(apis: Apis, cluster_a: Cluster) -> None:
    for i in range(10):
        cluster_a.add_pod(
            "a-w-1",
            f"q-{i}",
            labels={"app": "q"},
            owner_kind="ReplicaSet",
            owner_name="q-6d4cf56db6",
        )
    cluster_a.add_pdb("q", "default", {"app": "q"}, max_unavailable=3)
    with ThreadPoolExecutor(10) as pool:
        codes = list(pool.map(lambda i: status_of(apis, f"q-{i}"), range(10)))
    assert sorted(codes) == [201] * 3 + [429] * 7
    untouched = [p for p in cluster_a.pods("default") if not p["metadata"].get("deletionTimestamp")]
    assert len(untouched) == 7


def test_terminating_pod_evicts_with_201(apis: Apis, cluster_a: Cluster) -> None:
    cluster_a.stop_kubelet("a-w-2")
    cluster_a.add_pod("a-w-2", "stuck", labels={"app": "s"})
    cluster_a.add_pdb("s", "default", {"app": "s"}, min_available=1)
    apis.core.delete_namespaced_pod("stuck", "default")
    assert status_of(apis, "stuck") == 201  # PDB ignored: the pod is already terminating


def test_more_than_one_budget_is_500(apis: Apis, cluster_a: Cluster) -> None:
    cluster_a.add_pod("a-w-1", "x", labels={"app": "x"})
    cluster_a.add_pdb("x1", "default", {"app": "x"}, max_unavailable=1)
    cluster_a.add_pdb("x2", "default", {"app": "x"}, max_unavailable=1)
    with pytest.raises(client.ApiException) as err:
        evict(apis, "x")
    assert err.value.status == 500
    assert body(err.value)["message"].startswith("This pod has more than one PodDisruptionBudget")


def test_deleted_pod_stays_terminating_until_its_kubelet_finishes(
    apis: Apis, cluster_a: Cluster
) -> None:
    cluster_a.add_pod("a-w-1", "web")
    pod = apis.core.delete_namespaced_pod("web", "default")
    assert pod.metadata.deletion_timestamp is not None
    assert pod.metadata.deletion_grace_period_seconds == 30
    # everything that happened to it since, in order (a watch from the delete's version, not a
    # read that a busy machine could make after the kubelet's grace): Terminating, then gone
    stream, seen = watch.Watch(), []
    for event in stream.stream(
        apis.core.list_namespaced_pod,
        "default",
        resource_version=pod.metadata.resource_version,
        timeout_seconds=60,
    ):
        if event["object"].metadata.name == "web":
            seen.append((event["type"], event["object"].metadata.deletion_timestamp is not None))
        if event["type"] == "DELETED":
            stream.stop()
    assert seen and seen[-1] == ("DELETED", True)
    assert all(terminating for _, terminating in seen), seen
    with pytest.raises(client.ApiException) as err:
        apis.core.read_namespaced_pod("web", "default")
    assert err.value.status == 404


def test_stopped_kubelet_keeps_pods_terminating(
    world: World, apis: Apis, cluster_a: Cluster
) -> None:
    cluster_a.add_pod("a-w-2", "web")
    cluster_a.stop_kubelet("a-w-2")
    apis.core.delete_namespaced_pod("web", "default")
    with pytest.raises(TimeoutError):
        cluster_a.wait_for(lambda: cluster_a.pod("default", "web") is None, timeout=0.3)
    node = cluster_a.node("a-w-2")
    assert {t["key"] for t in node["spec"]["taints"]} == {"node.kubernetes.io/unreachable"}
    cluster_a.start_kubelet("a-w-2")
    cluster_a.wait_for(lambda: cluster_a.pod("default", "web") is None)


def test_hundred_parallel_evictions_are_taken_at_once_and_each_pod_goes_after_its_grace() -> None:
    """The API server answers an eviction without waiting for the pod's grace: with the node's
    kubelet away, a hundred evictions at once leave a hundred pods Terminating together. Back,
    the kubelet finishes every one of them, none sooner than the grace."""
    grace = 0.5
    with World(pod_grace_seconds=grace) as world:
        cluster = world.add_cluster(
            "big", nodes=[NodeSpec("cp", role="control-plane"), NodeSpec("w")]
        )
        for i in range(100):
            cluster.add_pod("w", f"p-{i}", labels={"app": "p"})
        apis = apis_for(cluster)
        cluster.stop_kubelet("w")  # nobody finishes a pod: each stays Terminating
        with ThreadPoolExecutor(20) as pool:
            codes = list(pool.map(lambda i: status_of(apis, f"p-{i}"), range(100)))
        assert codes == [201] * 100
        pods = cluster.pods("default")
        assert len(pods) == 100 and all(p["metadata"].get("deletionTimestamp") for p in pods)

        first_gone: list[float] = []

        def all_gone() -> bool:
            left = len(cluster.pods("default"))
            if left < 100 and not first_gone:
                first_gone.append(time.monotonic())
            return left == 0

        back = time.monotonic()
        cluster.start_kubelet("w")
        world.wait_for(all_gone, timeout=60)
        assert first_gone[0] - back >= grace  # a lower bound: slowness cannot break it


def test_max_unavailable_counts_controller_replicas(apis: Apis, cluster_a: Cluster) -> None:
    for i in range(3):
        cluster_a.add_pod(
            "a-w-1", f"rs-{i}", labels={"app": "rs"}, owner_kind="ReplicaSet", owner_name="rs-5c8d"
        )
    cluster_a.add_pod("a-w-1", "bare", labels={"app": "rs"})  # unmanaged: not expected
    cluster_a.add_pdb("rs", "default", {"app": "rs"}, max_unavailable=1)
    status = cluster_a.pdb("default", "rs")["status"]
    assert (status["expectedPods"], status["desiredHealthy"], status["currentHealthy"]) == (3, 2, 4)
    assert status["disruptionsAllowed"] == 2
    cluster_a.add_pod(
        "a-w-1", "ds-pod", labels={"app": "ds"}, owner_kind="DaemonSet", owner_name="agent"
    )
    cluster_a.add_pdb("ds", "default", {"app": "ds"}, max_unavailable=1)
    failed = cluster_a.pdb("default", "ds")["status"]
    assert failed["disruptionsAllowed"] == 0 and "observedGeneration" not in failed
    assert failed["conditions"][0]["reason"] == "SyncFailed"
    assert failed["conditions"][0]["message"] == 'found no controllers for pod "ds-pod"'
    assert status_of(apis, "ds-pod") == 429
