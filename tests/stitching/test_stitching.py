"""Stitching: many nodes, one request, real worker processes, scheduled as the rules demand."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from joinops.queue import enqueue_batch_advance
from joinops.requests.events import EventKind
from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from joinops.rules import batch as batches
from kubesim import NodeSpec, World
from tests.support.clusters import add_single_node_hosts, settings_for, write_config
from tests.support.engine import start_worker, stop_worker, wait_final
from workers import context
from workers.context import EngineContext

WORKERS = 3


@pytest.fixture
def world() -> Iterator[World]:
    with World(pod_grace_seconds=0.05, join_seconds=0.1) as w:
        w.add_cluster(
            "big",
            version="v1.32.2",
            control_plane_endpoint="cp.big.test:6443",
            nodes=[NodeSpec("big-cp-1", role="control-plane")],
        )
        add_single_node_hosts(w, 8)
        w.add_cluster(
            "small",
            version="v1.31.4",
            control_plane_endpoint="cp.small.test:6443",
            nodes=[NodeSpec("s-cp-1", role="control-plane"), NodeSpec("s-w-1"), NodeSpec("s-w-2")],
        )
        yield w


@pytest.fixture
def setup(world, tmp_path, redis_client, redis_url):
    def make(max_parallel: int, **overrides) -> EngineContext:  # type: ignore[no-untyped-def]
        config = dict(max_parallel=max_parallel, **overrides)
        ctx = EngineContext.from_settings(settings_for(world, tmp_path, redis_url, **config))
        context.install(ctx)
        path = write_config(world, tmp_path, **config)
        workers.extend(
            start_worker(path, redis_url, tmp_path / f"worker-{i}.log") for i in range(WORKERS)
        )
        return ctx

    workers: list = []
    yield make
    for process in workers:
        stop_worker(process)
    context.install(None)


def run_batch(ctx: EngineContext, plan: batches.BatchPlan):  # type: ignore[no-untyped-def]
    assert plan.allowed, batches.render(plan)
    batch = batches.create_batch(
        ctx.store, plan, requester="UREQ", decided_by="UAPP", state=State.APPROVED
    )
    enqueue_batch_advance(ctx.redis, batch.id)
    final = wait_final(ctx, batch.id, timeout=90)
    return batch, final, batches_children(ctx, batch.id)


def batches_children(ctx, batch_id):  # type: ignore[no-untyped-def]
    from workers.batch import children

    return {c.node: c for c in children(ctx, ctx.store.get(batch_id))}


def spans(ctx, kids) -> dict[str, tuple[float, float]]:  # type: ignore[no-untyped-def]
    """When each child's migration started (check step) and ended (final state)."""
    out = {}
    for node, child in kids.items():
        events = ctx.reporter.history(child.id)
        start = min((e.at for e in events if e.kind is EventKind.STEP_STARTED), default=0.0)
        end = max((e.at for e in events if e.is_final), default=0.0)
        out[node] = (start, end)
    return out


def max_concurrency(intervals) -> int:  # type: ignore[no-untyped-def]
    points = sorted(
        [(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals], key=lambda p: (p[0], p[1])
    )
    level = peak = 0
    for _, step in points:
        level += step
        peak = max(peak, level)
    return peak


def test_eight_single_node_clusters_stitched_into_one(world, setup):
    ctx = setup(max_parallel=2)
    nodes = [f"node-{i}" for i in range(1, 9)]
    plan = batches.plan_nodes(nodes, None, "big", Role.WORKER, ctx.clusters)
    assert [i.ask.source for i in plan.items] == [f"host-{i}" for i in range(1, 9)]
    assert all(i.verdict.destroys_source for i in plan.items)
    batch, final, kids = run_batch(ctx, plan)
    assert final.state == "succeeded", final.text
    assert "8 of 8 moved, 0 failed, 0 not run" in final.text
    big = world.cluster("big")
    for node in nodes:
        ready = big.node(node)["status"]["conditions"]
        assert any(c["type"] == "Ready" and c["status"] == "True" for c in ready)
    assert not any(world.cluster(f"host-{i}").reachable for i in range(1, 9))
    assert max_concurrency(spans(ctx, kids).values()) == 2  # as configured, and no more
    lines = [e.text for e in ctx.reporter.history(batch.id) if e.kind is EventKind.PROGRESS]
    assert len(lines) == 8 and all(": succeeded." in line for line in lines)


def test_two_clusters_merge_workers_before_the_control_plane(world, setup):
    ctx = setup(max_parallel=4)
    plan = batches.plan_all("small", "big", ctx.clusters)
    order = {i.ask.node: i for i in plan.items}
    # big has one etcd member: a second would make it even (etcd's FAQ), so it joins as a worker
    assert order["s-cp-1"].ask.role is Role.WORKER
    assert "etcd-size" in {f.code for f in order["s-cp-1"].verdict.findings}
    assert set(order["s-cp-1"].after) == {"s-w-1", "s-w-2"}
    _, final, kids = run_batch(ctx, plan)
    assert final.state == "succeeded", final.text
    times = spans(ctx, kids)
    assert times["s-cp-1"][0] > max(times["s-w-1"][1], times["s-w-2"][1])
    assert not world.cluster("small").reachable
    assert (
        "node-role.kubernetes.io/control-plane"
        not in world.cluster("big").node("s-cp-1")["metadata"]["labels"]
    )


def test_one_failing_node_is_reported_while_the_others_finish(world, setup):
    small = world.cluster("small")
    small.add_pod("s-w-1", "db-0", labels={"app": "db"}, owner_kind="StatefulSet")
    small.add_pdb("db", "default", {"app": "db"}, min_available=1)  # s-w-1 cannot drain
    ctx = setup(max_parallel=4, timeouts={"drain": "2s"})
    plan = batches.plan_nodes(
        ["s-w-1", "s-w-2", "node-1", "node-2"], None, "big", Role.WORKER, ctx.clusters
    )
    _, final, kids = run_batch(ctx, plan)
    assert final.state == "failed"
    outcomes = {n: ctx.store.get(k.id).outcome for n, k in kids.items()}
    assert "3 of 4 moved, 1 failed, 0 not run" in final.text, outcomes
    assert kids["s-w-1"].state is State.FAILED and "db-0" in kids["s-w-1"].outcome
    assert all(kids[n].state is State.SUCCEEDED for n in ("s-w-2", "node-1", "node-2"))


def test_a_failed_worker_holds_the_control_plane_that_waits_for_it(world, setup):
    small = world.cluster("small")
    small.add_pod("s-w-1", "db-0", labels={"app": "db"}, owner_kind="StatefulSet")
    small.add_pdb("db", "default", {"app": "db"}, min_available=1)
    ctx = setup(max_parallel=4, timeouts={"drain": "2s"})
    _, final, kids = run_batch(ctx, batches.plan_all("small", "big", ctx.clusters))
    assert "1 of 3 moved, 1 failed, 1 not run" in final.text
    assert kids["s-cp-1"].state is State.CANCELLED
    assert "it had to wait for `s-w-1`, which failed" in kids["s-cp-1"].outcome
    assert small.reachable and small.node("s-cp-1") is not None
