"""Waiting does not hold a worker: two `joinops worker` processes drive 16 migrations at once.

The simulated hosts' joins are held until all 16 migrations wait for them: a worker that stayed
with its migration while the node joins would have at most two of them waiting at once, and the
test would wait in vain. Parked for re-checks by RQ's scheduler, all 16 wait together, on the
same two workers, however slow the machine.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest

from joinops.queue import enqueue_batch_advance
from joinops.requests.events import EventKind
from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from joinops.requests.steprecords import Outcome
from joinops.rules import batch as batches
from kubesim import NodeSpec, World
from tests.support.clusters import add_single_node_hosts, settings_for, write_config
from tests.support.engine import start_worker, stop_worker, wait_final
from workers import context
from workers.batch import children
from workers.context import EngineContext

CLUSTERS = 16
JOIN_SECONDS = 0.5


@pytest.fixture
def world() -> Iterator[World]:
    with World(pod_grace_seconds=0.05, join_seconds=JOIN_SECONDS) as w:
        w.add_cluster(
            "big",
            version="v1.32.2",
            control_plane_endpoint="cp.big.test:6443",
            nodes=[NodeSpec("big-cp-1", role="control-plane")],
        )
        add_single_node_hosts(w, CLUSTERS)
        yield w


def test_two_workers_drive_sixteen_migrations_at_once(world, tmp_path, redis_client, redis_url):
    config = {"max_parallel": CLUSTERS}
    ctx = EngineContext.from_settings(settings_for(world, tmp_path, redis_url, **config))
    context.install(ctx)
    path = write_config(world, tmp_path, **config)
    workers = [start_worker(path, redis_url, tmp_path / f"worker-{i}.log") for i in (1, 2)]
    try:
        nodes = [f"node-{i}" for i in range(1, CLUSTERS + 1)]
        plan = batches.plan_nodes(nodes, None, "big", Role.WORKER, ctx.clusters)
        assert plan.allowed, batches.render(plan)
        batch = batches.create_batch(
            ctx.store, plan, requester="UREQ", decided_by="UAPP", state=State.APPROVED
        )
        world.hold_joins()  # every reset host waits to join until all 16 are waiting
        enqueue_batch_advance(ctx.redis, batch.id)
        _await(lambda: _waiting_for_joins(ctx, batch.id) == CLUSTERS, timeout=300)
        world.hold_joins(False)
        final = wait_final(ctx, batch.id, timeout=120)
    finally:
        for process in workers:
            stop_worker(process)
        context.install(None)
    assert final.state == "succeeded", final.text
    assert f"{CLUSTERS} of {CLUSTERS} moved" in final.text
    kids = children(ctx, ctx.store.get(batch.id))
    waits = []  # when each migration began waiting for its join, and when the join was seen
    for kid in kids:
        history = ctx.reporter.history(kid.id)
        joined = [e for e in history if e.step == "wait-joined"]
        # one step, one record, one "started" and one "succeeded" line however often re-checked
        assert [e.kind for e in joined] == [EventKind.STEP_STARTED, EventKind.STEP_SUCCEEDED], [
            e.text for e in joined
        ]
        assert ctx.records.get(kid.id, "wait-joined").outcome is Outcome.SUCCEEDED
        assert ctx.records.get(kid.id, "wait-joined").attempts == 1
        waits.append((joined[0].at, joined[1].at))
    # all 16 were waiting for their joins at the same moment, on two workers
    assert max(start for start, _ in waits) < min(end for _, end in waits)
    for i in range(1, CLUSTERS + 1):
        conditions = world.cluster("big").node(f"node-{i}")["status"]["conditions"]
        assert any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def _waiting_for_joins(ctx: EngineContext, batch_id: str) -> int:
    """How many of the batch's migrations have started waiting for their node's join."""
    batch = ctx.store.get(batch_id)
    if batch is None:
        return 0
    return sum(
        1
        for kid in children(ctx, batch)
        if any(
            e.step == "wait-joined" and e.kind is EventKind.STEP_STARTED
            for e in ctx.reporter.history(kid.id)
        )
    )


def _await(condition: Callable[[], bool], timeout: float) -> None:
    """Look again every tenth of a second until `condition` holds (bounded)."""
    deadline, pause = time.monotonic() + timeout, threading.Event()
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout} s"
        pause.wait(0.1)
