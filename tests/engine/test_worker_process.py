"""Real `joinops worker` processes: a worker killed with SIGKILL mid-drain is resumed."""

from __future__ import annotations

from joinops.queue import enqueue_migration
from joinops.requests.lifecycle import State
from joinops.requests.steprecords import Outcome
from tests.support.clusters import write_config
from tests.support.engine import (
    approved_request,
    kill_worker,
    start_worker,
    stop_worker,
    wait_event,
    wait_final,
)


def test_worker_killed_mid_drain_is_resumed_without_repeating_steps(
    world, make_ctx, tmp_path, redis_url
):
    a, b = world.cluster("clusterA"), world.cluster("clusterB")
    for i in range(4):
        a.add_pod("a-w-1", f"web-{i}", labels={"app": "web"}, owner_kind="ReplicaSet")
    a.add_pod("a-w-1", "db-0", labels={"app": "db"}, owner_kind="StatefulSet")
    a.add_pdb("db", "default", {"app": "db"}, min_available=1)  # holds the drain
    config = write_config(world, tmp_path, timeouts={"drain": "60s"})
    ctx = make_ctx(timeouts={"drain": "60s"})
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")
    enqueue_migration(ctx.redis, ctx.settings, request.id)

    first = start_worker(config, redis_url, tmp_path / "worker-1.log")
    try:
        wait_event(ctx, request.id, lambda e: e.step == "drain" and e.kind == "step-started")
        a.wait_for(
            lambda: (
                not [p for p in a.pods(node="a-w-1") if p["metadata"]["name"].startswith("web")]
            ),
            timeout=20,
        )
    finally:
        kill_worker(first)

    records = ctx.records.all(request.id)
    assert {s: r.outcome for s, r in records.items()} == {
        "check": Outcome.SUCCEEDED,
        "join-material": Outcome.SUCCEEDED,
        "probe": Outcome.SUCCEEDED,
        "cordon": Outcome.SUCCEEDED,
        "drain": Outcome.RUNNING,
    }
    assert ctx.store.get(request.id).state is State.RUNNING

    ctx.clusters.get("clusterA").policy.delete_namespaced_pod_disruption_budget("db", "default")
    second = start_worker(config, redis_url, tmp_path / "worker-2.log")
    try:
        final = wait_final(ctx, request.id, timeout=60)
    finally:
        stop_worker(second)

    assert final.state == "succeeded", final.text
    records = ctx.records.all(request.id)
    assert all(r.outcome is Outcome.SUCCEEDED for r in records.values())
    assert [records[s].attempts for s in ("check", "join-material", "cordon", "drain")] == [
        1,
        1,
        1,
        2,
    ]
    accepted = [r.name for r in a.requests if r.subresource == "eviction" and r.status < 300]
    assert sorted(accepted) == ["db-0", "web-0", "web-1", "web-2", "web-3"]  # each once
    minted = [
        r
        for r in b.requests
        if r.method == "POST" and r.resource == "secrets" and r.namespace == "kube-system"
    ]
    assert len(minted) == 1  # one token, never a second
    texts = [e.text for e in ctx.reporter.history(request.id)]
    assert any("Resumed after a worker restart, at step `drain`" in t for t in texts)
    assert b.node("a-w-1") is not None and a.node("a-w-1") is None
