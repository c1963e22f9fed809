"""The drain evicts the pods it listed at the start and waits for those UIDs, as `kubectl drain`
does (its `waitForDelete`: gone, or replaced by a pod of another UID); a pod that appears on
the cordoned node afterwards is reported once and never evicted. When the drain gives up, each
listed pod still there is named with its own reason; no budget is blamed that does not exist.

Jobs run in this process against simulated clusters, through the real client. The ReplicaSet
whose template sets `spec.nodeName` stands for the real controller: it creates a replacement
as soon as a pod is marked for deletion, the scheduler (and with it the cordon) is bypassed
because the node is named, and the node's kubelet runs it.
"""

from __future__ import annotations

import threading
from typing import Any

from kubernetes import client

from joinops.requests.lifecycle import State
from tests.support.engine import approved_request
from workers.runner import run_request

NODE = "a-w-1"
PINNED = {"app": "pinned"}


def pinned_replicaset(replicas: int) -> dict[str, Any]:
    return {
        "metadata": {"name": "pinned"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": PINNED},
            "template": {
                "metadata": {"labels": PINNED},
                "spec": {
                    "nodeName": NODE,
                    "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
                },
            },
        },
    }


def evicted_names(cluster) -> list[str]:  # type: ignore[no-untyped-def]
    return [r.name for r in cluster.requests if r.subresource == "eviction"]


def node_pod_lists_after_first_eviction(records) -> int:  # type: ignore[no-untyped-def]
    first = next((i for i, r in enumerate(records) if r.subresource == "eviction"), None)
    if first is None:
        return 0
    return sum(
        1
        for r in records[first:]
        if r.verb == "list"
        and r.resource == "pods"
        and r.query.get("fieldSelector") == f"spec.nodeName={NODE}"
    )


def pinned_on_node(cluster) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    return [p for p in cluster.pods(node=NODE) if p["metadata"]["name"].startswith("pinned-")]


def test_replacements_pinned_to_the_node_are_reported_once_and_never_evicted(world, make_ctx):
    a = world.cluster("clusterA")
    raw = a.api_client()
    apps, policy = client.AppsV1Api(raw), client.PolicyV1Api(raw)
    apps.create_namespaced_replica_set("default", pinned_replicaset(3))
    a.wait_for(lambda: len(pinned_on_node(a)) == 3)
    listed = sorted(p["metadata"]["name"] for p in pinned_on_node(a))
    # A budget holds one other pod back, so the drain runs several slices (timeouts.recheck)
    # while the pinned replacements sit on the cordoned node.
    a.add_pod(NODE, "held-0", labels={"app": "held"}, owner_kind="ReplicaSet")
    a.add_pdb("held", "default", {"app": "held"}, min_available=1)
    ctx = make_ctx(timeouts={"recheck": "1s"})
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    outcome: dict[str, Any] = {}
    runner = threading.Thread(
        target=lambda: outcome.update(state=run_request(ctx, request.id, park=True))
    )
    runner.start()
    try:
        a.wait_for_requests(lambda rs: node_pod_lists_after_first_eviction(rs) >= 3, timeout=60)
    finally:
        policy.delete_namespaced_pod_disruption_budget("held", "default")
        runner.join(timeout=120)
    assert not runner.is_alive()

    assert outcome["state"] is State.SUCCEEDED
    pinned_evictions = sorted(n for n in evicted_names(a) if n.startswith("pinned-"))
    assert pinned_evictions == listed  # each listed pod once; no replacement, ever
    notices = [
        e.text for e in ctx.reporter.events if e.step == "drain" and "`default/pinned-" in e.text
    ]
    assert len(notices) == 1
    assert "by ReplicaSet `default/pinned`" in notices[0]
    assert "re-created on `a-w-1` by its template's nodeName" in notices[0]
    assert "it will be stopped by the reset" in notices[0]
    drained = next(
        e.text for e in ctx.reporter.events if e.step == "drain" and e.kind == "step-succeeded"
    )
    assert "drained: 4 pods moved off" in drained  # the three listed and held-0
    assert "re-created on the node by ReplicaSet `default/pinned` left for the reset" in drained
    assert world.cluster("clusterB").node(NODE) is not None


def failed_drain(ctx, request) -> str:  # type: ignore[no-untyped-def]
    assert run_request(ctx, request.id) is State.FAILED
    final = ctx.store.get(request.id)
    assert final.failed_step == "drain"
    return str(final.outcome)


def test_a_pod_its_budget_refuses_is_named_with_the_budget(world, make_ctx):
    a = world.cluster("clusterA")
    a.add_pod(NODE, "web-0", labels={"app": "web"}, owner_kind="ReplicaSet")
    a.add_pdb("web-guard", "default", {"app": "web"}, min_available=1)
    ctx = make_ctx(timeouts={"drain": "3s"})
    outcome = failed_drain(ctx, approved_request(ctx, NODE, "clusterA", "clusterB"))
    assert (
        "default/web-0 (eviction refused by the disruption budget `web-guard`: "
        "needs 1 healthy pods and has 1 currently)"
    ) in outcome
    assert "Free the disruption budgets named" in outcome


def test_a_pod_stuck_terminating_is_named_past_its_grace_and_no_budget_is_blamed(world, make_ctx):
    a = world.cluster("clusterA")
    a.add_pod(NODE, "slow-0", owner_kind="ReplicaSet", spec={"terminationGracePeriodSeconds": 1})

    def kubelet_stops_after_cordon(event) -> None:  # type: ignore[no-untyped-def]
        if event.step == "cordon" and event.kind == "step-succeeded":
            a.stop_kubelet(NODE)  # the evicted pod stays Terminating: nothing confirms it

    ctx = make_ctx(hooks=[kubelet_stops_after_cordon], timeouts={"drain": "4s"})
    outcome = failed_drain(ctx, approved_request(ctx, NODE, "clusterA", "clusterB"))
    assert evicted_names(a) == ["slow-0"]  # evicted once, then waited for
    assert "default/slow-0 (still terminating, " in outcome
    assert "s past its grace period)" in outcome
    assert "budget" not in outcome


def test_throttled_evictions_are_not_blamed_on_a_budget(world, make_ctx):
    a = world.cluster("clusterA")
    a.add_pod(NODE, "web-0", labels={"app": "web"}, owner_kind="ReplicaSet")
    # API Priority and Fairness: 429 with Retry-After and no DisruptionBudget cause
    a.faults.add(status=429, path_contains="/eviction", times=None)
    ctx = make_ctx(timeouts={"drain": "3s"})
    outcome = failed_drain(ctx, approved_request(ctx, NODE, "clusterA", "clusterB"))
    assert "default/web-0 (throttled by the API server (429 Too Many Requests" in outcome
    assert "refused by the disruption budget" not in outcome and "Free the" not in outcome
