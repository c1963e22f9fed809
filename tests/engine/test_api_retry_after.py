"""The Kubernetes API used as client-go uses it: a 429 (or a 5xx saying when) is retried after
the server's Retry-After, capped, up to 10 times, in every step; a long list is read in pages
and starts again when its continue token expires; watches ask for bookmarks; writes name joinops
as their field manager. Against kubesim, through the official client."""

from __future__ import annotations

import threading
import time

import pytest

from joinops.clusters import pages, retry_after, watches
from joinops.clusters.kube import KubeCluster
from joinops.errors import ClusterRateLimited
from joinops.requests.events import EventKind
from joinops.requests.lifecycle import State
from joinops.requests.steprecords import Outcome
from kubesim import NodeSpec, World
from tests.support.engine import approved_request
from workers.runner import run_request

NODE = "a-w-1"


def outcome(ctx, request) -> str:  # type: ignore[no-untyped-def]
    return ctx.store.get(request.id).outcome


@pytest.mark.parametrize(
    ("status", "header", "wait"),
    [
        (429, "7200", 60.0),  # hours: capped
        (429, "3", 3.0),
        (429, None, 1.0),  # none: defaulted
        (429, "soon", 1.0),  # not a number of seconds (client-go reads none): defaulted
        (503, "2", 2.0),  # a 5xx saying when: retried, as client-go does
        (503, None, None),  # a 5xx saying nothing may have been acted on: the step decides
        (500, "-1", None),
        (409, "1", None),
    ],
)
def test_the_wait_before_a_retry(status: int, header: str | None, wait: float | None) -> None:
    assert retry_after.wait_seconds(status, header, retry_after.DEFAULT_CAP_SECONDS) == wait


def test_a_retry_after_of_hours_waits_the_cap_then_the_call_is_answered(world: World) -> None:
    a = world.cluster("clusterA")
    slept: list[float] = []
    raw = a.api_client()
    retry_after.install(raw, "clusterA", sleep=slept.append)  # the waits, without waiting
    kube = KubeCluster("clusterA", raw, timeout_seconds=5)
    a.faults.add(status=429, path_contains=f"/api/v1/nodes/{NODE}", retry_after=7200)
    a.faults.add(status=429, path_contains="/configmaps", method="POST", retry_after=0)

    assert kube.get_node(NODE) is not None
    kube.call(
        "create",
        "configmaps/made",
        kube.core.create_namespaced_config_map,
        "default",
        {"metadata": {"name": "made"}, "data": {"k": "v"}},
    )

    assert slept == [60.0, 1.0]  # capped at 60 s; no Retry-After: 1 s
    reads = [r.status for r in a.requests if r.path == f"/api/v1/nodes/{NODE}"]
    creates = [r.status for r in a.requests if r.method == "POST"]
    assert reads == [429, 200] and creates == [429, 201]  # a 429 was not acted on: sent again
    assert a.configmap("default", "made") is not None


def test_ten_retries_then_the_429_is_the_callers(world: World) -> None:
    a = world.cluster("clusterA")
    slept: list[float] = []
    raw = a.api_client()
    retry_after.install(raw, "clusterA", sleep=slept.append)
    kube = KubeCluster("clusterA", raw, timeout_seconds=5)
    a.faults.add(status=429, path_contains=f"/api/v1/nodes/{NODE}", times=None, retry_after=2)

    with pytest.raises(ClusterRateLimited) as refused:
        kube.get_node(NODE)
    assert slept == [2.0] * 10
    assert len([r for r in a.requests if r.path == f"/api/v1/nodes/{NODE}"]) == 11
    assert "still throttled (HTTP 429) after 10 retries" in str(refused.value)


def test_an_absurd_retry_after_is_capped_said_in_the_thread_and_the_move_succeeds(
    world: World, make_ctx
) -> None:  # type: ignore[no-untyped-def]
    a = world.cluster("clusterA")
    ctx = make_ctx(timeouts={"retry_after_cap": 0.2})  # the cap, scaled down from 60 s
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    # the cordon's patch is throttled once, asking for two hours
    a.faults.add(
        status=429, path_contains=f"/api/v1/nodes/{NODE}", method="PATCH", retry_after=7200
    )

    assert run_request(ctx, request.id) is State.SUCCEEDED, outcome(ctx, request)

    patches = [r.status for r in a.requests if r.method == "PATCH" and r.name == NODE]
    assert patches[:2] == [429, 200]
    history = ctx.reporter.history(request.id)
    said = [(e.step, e.text) for e in history if e.kind == EventKind.PROGRESS and "429" in e.text]
    assert said == [
        (
            "cordon",
            "clusterA is throttling joinops (HTTP 429 Too Many Requests) and asked for a wait "
            "of 120 min: joinops waits at most 0.2 s at a time, then retries (up to 10 retries "
            "of each call).",
        )
    ]
    assert [e for e in history if e.kind == EventKind.STEP_RETRYING] == []  # the call, not the step


def test_wait_joined_keeps_waiting_through_a_throttled_target(world: World, make_ctx) -> None:  # type: ignore[no-untyped-def]
    """After the node agent, a target that keeps answering 429 past the client's 10 retries
    does not fail the move: the wait goes on until the node is seen Ready."""
    b = world.cluster("clusterB")

    def throttle_once_the_wait_begins(event) -> None:  # type: ignore[no-untyped-def]
        if event.step == "wait-joined" and event.kind == EventKind.STEP_STARTED:
            # 11 answers exhaust one call's retries; the wait looks again, 30 in all
            b.faults.add(status=429, path_contains="/api/v1/nodes", method="GET", times=30)

    ctx = make_ctx(hooks=[throttle_once_the_wait_begins], timeouts={"retry_after_cap": 0.02})
    request = approved_request(ctx, NODE, "clusterA", "clusterB")

    assert run_request(ctx, request.id) is State.SUCCEEDED, outcome(ctx, request)

    throttled = [r for r in b.requests if r.status == 429]
    assert len(throttled) == 30
    record = ctx.records.get(request.id, "wait-joined")
    assert (record.outcome, record.attempts) == (Outcome.SUCCEEDED, 1)
    history = ctx.reporter.history(request.id)
    assert [e for e in history if e.kind == EventKind.STEP_RETRYING] == []
    assert b.node(NODE) is not None


def test_a_list_whose_continue_token_expires_starts_again_and_is_whole(world: World) -> None:
    a = world.cluster("clusterA")
    kube = KubeCluster("clusterA", a.api_client(), timeout_seconds=5)
    a.faults.add_compaction()  # etcd compacts before the list's second page
    listing = pages.list_all(kube, "nodes", kube.core.list_node, page_size=2)

    names = [n.metadata.name for n in listing.items]
    assert names == sorted(a.node_names())  # every node once: not the first page alone
    asked = [(r.query.get("continue", "") != "", r.status) for r in a.requests]
    assert asked == [(False, 200), (True, 410), (False, 200), (True, 200), (True, 200)]


def test_a_list_that_keeps_expiring_is_read_in_one_call(world: World) -> None:
    a = world.cluster("clusterA")
    kube = KubeCluster("clusterA", a.api_client(), timeout_seconds=5)
    a.faults.add_compaction(times=None)  # every continue token is too old by the time it is used
    listing = pages.list_all(kube, "nodes", kube.core.list_node, page_size=2)

    assert [n.metadata.name for n in listing.items] == sorted(a.node_names())
    last = a.requests[-1]
    assert "limit" not in last.query and last.status == 200
    assert [r.status for r in a.requests].count(410) == pages.RESTARTS


def test_a_watch_asks_for_bookmarks_and_resumes_from_the_last_one(world: World) -> None:
    a = world.cluster("clusterA")
    kube = KubeCluster("clusterA", a.api_client(), timeout_seconds=5)
    found: list[object] = []
    now = time.time()
    waiting = threading.Thread(
        target=lambda: found.append(
            watches.wait_for(
                kube,
                "nodes/late",
                kube.core.list_node,
                matches=lambda n: True,
                deadline=now + 2,
                clock=lambda: now,  # time stands still: each watch lasts 2 s, until a match
                field_selector="metadata.name=late",
            )
        )
    )
    waiting.start()
    a.wait_for_requests(lambda rs: any(r.query.get("watch") for r in rs))
    a.add_configmap("default", "elsewhere", {"k": "v"})  # the revision moves past the list's
    moved_to = a.store.rv
    seen = a.wait_for_requests(lambda rs: len([r for r in rs if r.query.get("watch")]) >= 2)
    a.add_node(NodeSpec("late"))  # what the second watch waits for
    waiting.join()

    assert found and found[0].metadata.name == "late"  # type: ignore[attr-defined]
    first, second = [r for r in seen if r.query.get("watch")][:2]
    assert first.query["allowWatchBookmarks"] == second.query["allowWatchBookmarks"] == "true"
    # the first watch saw no node, only bookmarks: the second resumes where they got to
    assert int(second.query["resourceVersion"]) >= moved_to > int(first.query["resourceVersion"])


def test_every_write_of_a_migration_names_joinops_and_only_the_rules_read_from_cache(
    world: World, make_ctx
) -> None:  # type: ignore[no-untyped-def]
    a, b = world.cluster("clusterA"), world.cluster("clusterB")
    a.add_pod(NODE, "web-0", labels={"app": "web"}, owner_kind="ReplicaSet")
    ctx = make_ctx()
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.SUCCEEDED, outcome(ctx, request)

    writes = [r for r in a.requests + b.requests if r.method in ("POST", "PUT", "PATCH")]
    assert writes and {r.query.get("fieldManager") for r in writes} == {"joinops"}
    managers = {e["manager"] for e in b.node(NODE)["metadata"]["managedFields"]}
    assert "joinops" in managers  # the role label cleanup put on the moved node

    node_pods = [
        r.query
        for r in a.requests
        if r.resource == "pods"
        and r.verb == "list"
        and r.query.get("fieldSelector") == f"spec.nodeName={NODE}"
    ]
    # the rules' preview (check, then the check step) from the watch cache; the drain's own
    # reads consistent: what it evicts, and that the node is empty before the reset
    cached = [q for q in node_pods if q.get("resourceVersion") == "0"]
    consistent = [q for q in node_pods if "resourceVersion" not in q]
    assert len(cached) == 2 and consistent
    assert all(q.get("limit") == str(pages.PAGE_SIZE) for q in node_pods)
