"""`max_parallel: auto`: a batch started without a width (as `joinops migrate` and a batch stored
by an earlier version start) gets one from the live `joinops worker` processes at its first
look, stores it, and runs no more children at once than that."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from joinops import parallelism
from joinops.queue import enqueue_batch_advance
from joinops.requests.events import EventKind
from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from joinops.rules import batch as batches
from kubesim import NodeSpec, World
from tests.bot.harness import until
from tests.support.clusters import add_single_node_hosts, settings_for, write_config
from tests.support.engine import start_worker, stop_worker, wait_final
from workers import context
from workers.batch import children
from workers.context import EngineContext

HOSTS = 6
WORKERS = 3
AUTO = {"max_parallel": "auto", "joins_per_worker": 1, "join_admission": 32}


@pytest.fixture
def world() -> Iterator[World]:
    with World(pod_grace_seconds=0.05, join_seconds=0.3) as w:
        w.add_cluster(
            "big",
            version="v1.32.2",
            control_plane_endpoint="cp.big.test:6443",
            nodes=[NodeSpec("big-cp-1", role="control-plane")],
        )
        add_single_node_hosts(w, HOSTS)
        yield w


def peak(ctx: EngineContext, batch_id: str) -> int:
    """The most children running at once, from their first step to their final event."""
    points: list[tuple[float, int]] = []
    for child in children(ctx, ctx.store.get(batch_id)):
        events = ctx.reporter.history(child.id)
        points.append((min(e.at for e in events if e.kind is EventKind.STEP_STARTED), 1))
        points.append((max(e.at for e in events if e.is_final), -1))
    level = most = 0
    for _, step in sorted(points):
        level += step
        most = max(most, level)
    return most


def test_auto_takes_its_width_from_the_live_workers_and_keeps_to_it(
    world, tmp_path, redis_client, redis_url
):
    ctx = EngineContext.from_settings(settings_for(world, tmp_path, redis_url, **AUTO))
    context.install(ctx)
    path = write_config(world, tmp_path, **AUTO)
    workers = [start_worker(path, redis_url, tmp_path / f"worker-{i}.log") for i in range(WORKERS)]
    try:
        until(lambda: parallelism.live_workers(redis_client) == WORKERS, 120)
        nodes = [f"node-{i}" for i in range(1, HOSTS + 1)]
        plan = batches.plan_nodes(nodes, None, "big", Role.WORKER, ctx.clusters)
        assert plan.allowed, batches.render(plan)
        batch = batches.create_batch(
            ctx.store, plan, requester="UREQ", decided_by="UAPP", state=State.APPROVED
        )
        assert parallelism.stored(batch.extra) is None  # chosen when it starts, not before
        enqueue_batch_advance(ctx.redis, batch.id)
        final = wait_final(ctx, batch.id, timeout=120)
    finally:
        for process in workers:
            stop_worker(process)
        context.install(None)
    assert final.state == "succeeded", final.text
    ran = ctx.store.get(batch.id)
    assert ran is not None and parallelism.stored(ran.extra) == WORKERS  # 3 workers x 1 each
    assert peak(ctx, batch.id) <= WORKERS  # 6 nodes, never more than the width at once
