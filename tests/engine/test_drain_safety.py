"""The drain classifies pods again right before it acts, and reads eviction answers as kubectl.

Jobs run in this process against simulated clusters, through the real client.
"""

from __future__ import annotations

import threading
import time

import pytest

from joinops.requests.lifecycle import State
from kubesim.resources import NAMESPACES
from tests.support.clusters import registry_for
from tests.support.engine import approved_request
from workers import drain
from workers.runner import run_request


def evictions(cluster) -> list:  # type: ignore[no-untyped-def]
    return [r for r in cluster.requests if r.subresource == "eviction"]


def cordoned(cluster, node: str) -> bool:  # type: ignore[no-untyped-def]
    return bool(cluster.node(node)["spec"].get("unschedulable"))


def test_a_bare_pod_appearing_after_approval_stops_the_drain_before_any_eviction(world, make_ctx):
    a = world.cluster("clusterA")
    a.add_pod("a-w-1", "web-0", labels={"app": "web"}, owner_kind="ReplicaSet")

    def bare_pod_after_cordon(event) -> None:  # type: ignore[no-untyped-def]
        if event.step == "cordon" and event.kind == "step-succeeded":
            a.add_pod("a-w-1", "debug", namespace="tools")

    ctx = make_ctx(hooks=[bare_pod_after_cordon])
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.FAILED
    final = ctx.store.get(request.id)
    assert final.failed_step == "drain"
    assert "`tools/debug`" in final.outcome and "--force" in final.outcome
    assert evictions(a) == []
    assert a.pod("default", "web-0") is not None and a.pod("tools", "debug") is not None
    assert not cordoned(a, "a-w-1")
    assert world.cluster("clusterB").node("a-w-1") is None


def test_a_forced_request_deletes_the_bare_pod_and_moves_the_node(world, make_ctx):
    a = world.cluster("clusterA")
    a.add_pod("a-w-1", "debug", namespace="tools")
    ctx = make_ctx()
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB", force=True)
    assert run_request(ctx, request.id) is State.SUCCEEDED
    assert a.pod("tools", "debug") is None
    assert world.cluster("clusterB").node("a-w-1") is not None
    drained = next(
        e for e in ctx.reporter.events if e.step == "drain" and e.kind == "step-succeeded"
    )
    assert "deleted for good (forced): `tools/debug`" in drained.text


def test_a_pod_under_two_budgets_fails_the_drain_at_once_naming_them(world, make_ctx):
    a = world.cluster("clusterA")
    a.add_pod("a-w-1", "web-0", labels={"app": "web", "tier": "front"}, owner_kind="ReplicaSet")
    a.add_pdb("web-a", "default", {"app": "web"}, min_available=0)
    a.add_pdb("web-b", "default", {"tier": "front"}, min_available=0)
    ctx = make_ctx()
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.FAILED
    final = ctx.store.get(request.id)
    assert final.failed_step == "drain"
    assert "more than one PodDisruptionBudget: `web-a`, `web-b`" in final.outcome
    assert [r.status for r in evictions(a)] == [500]  # not retried
    assert not cordoned(a, "a-w-1") and a.pod("default", "web-0") is not None


@pytest.mark.parametrize("status", [400, 422])
def test_a_rejected_eviction_fails_the_drain_at_once_with_the_api_message(world, make_ctx, status):
    a = world.cluster("clusterA")
    a.add_pod("a-w-1", "web-0", labels={"app": "web"}, owner_kind="ReplicaSet")
    a.faults.add(status=status, path_contains="/eviction", times=None)
    ctx = make_ctx()
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.FAILED
    final = ctx.store.get(request.id)
    assert final.failed_step == "drain"
    assert f"rejected the eviction of `default/web-0` (HTTP {status})" in final.outcome
    assert len(evictions(a)) == 1
    assert not cordoned(a, "a-w-1")


def drain_in_thread(world, tmp_path, node: str):  # type: ignore[no-untyped-def]
    cluster = registry_for(world, tmp_path).get("clusterA")
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["result"] = drain.drain(
                cluster, node, deadline=time.time() + 30, progress=lambda *_: None
            )
        except Exception as e:  # the test asserts there was none
            outcome["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def test_a_pod_in_a_terminating_namespace_is_waited_for_not_refused(world, tmp_path):
    a = world.cluster("clusterA")
    a.add_pod("a-w-1", "held-1", namespace="doomed", owner_kind="ReplicaSet")
    with a.lock:  # the namespace is being deleted; its controller has not reached the pod yet
        a.store.mutate(NAMESPACES, "", "doomed", lambda o: o["status"].update(phase="Terminating"))
    thread, outcome = drain_in_thread(world, tmp_path, "a-w-1")
    a.wait_for_requests(lambda rs: any(r.subresource == "eviction" for r in rs), timeout=10)
    assert [r.status for r in evictions(a)] == [403]
    assert thread.is_alive()  # waiting for the pod, not failed
    a.delete_pod("doomed", "held-1")  # what the namespace controller does
    thread.join(timeout=30)
    assert "error" not in outcome and outcome["result"].done
    assert [r.status for r in evictions(a)] == [403]  # waited, never evicted again


def test_a_404_answer_counts_as_gone(world, tmp_path):
    a = world.cluster("clusterA")
    a.add_pod("a-w-1", "web-0", owner_kind="ReplicaSet")
    a.faults.add(status=404, path_contains="/eviction")
    thread, outcome = drain_in_thread(world, tmp_path, "a-w-1")
    a.wait_for_requests(lambda rs: any(r.subresource == "eviction" for r in rs), timeout=10)
    assert [r.status for r in evictions(a)] == [404]
    a.delete_pod("default", "web-0", grace=0)
    thread.join(timeout=30)
    assert "error" not in outcome and outcome["result"].done
    assert outcome["result"].blockers == {} and len(evictions(a)) == 1
