"""16 migrations at once into one target whose API server throttles a third of the calls, as
API Priority and Fairness does under load (429, `Retry-After: 1`, its plain-text body): every
throttled call is retried after the Retry-After, whatever its verb, and all 16 moves succeed.
Real `joinops worker` processes; the target is kubesim with `flow_control.reject_every = 3`."""

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
from workers.batch import children
from workers.context import EngineContext

CLUSTERS = 16
WORKERS = 4


@pytest.fixture
def world() -> Iterator[World]:
    with World(pod_grace_seconds=0.05, join_seconds=0.5) as w:
        w.add_cluster(
            "big",
            version="v1.32.2",
            control_plane_endpoint="cp.big.test:6443",
            nodes=[NodeSpec("big-cp-1", role="control-plane")],
        )
        add_single_node_hosts(w, CLUSTERS)
        yield w


def test_sixteen_migrations_into_a_target_throttling_a_third_of_the_calls_all_succeed(
    world, tmp_path, redis_client, redis_url
):  # type: ignore[no-untyped-def]
    big = world.cluster("big")
    big.flow_control.reject_every = 3  # every third request, from the first
    config = {"max_parallel": CLUSTERS}
    ctx = EngineContext.from_settings(settings_for(world, tmp_path, redis_url, **config))
    context.install(ctx)
    path = write_config(world, tmp_path, **config)
    workers = [start_worker(path, redis_url, tmp_path / f"worker-{i}.log") for i in range(WORKERS)]
    try:
        nodes = [f"node-{i}" for i in range(1, CLUSTERS + 1)]
        plan = batches.plan_nodes(nodes, None, "big", Role.WORKER, ctx.clusters)
        assert plan.allowed, batches.render(plan)
        batch = batches.create_batch(
            ctx.store, plan, requester="UREQ", decided_by="UAPP", state=State.APPROVED
        )
        enqueue_batch_advance(ctx.redis, batch.id)
        final = wait_final(ctx, batch.id, timeout=300)
    finally:
        for process in workers:
            stop_worker(process)
        context.install(None)

    assert final.state == "succeeded", final.text
    assert f"{CLUSTERS} of {CLUSTERS} moved" in final.text
    throttled = [r for r in big.requests if r.status == 429]
    assert len(throttled) == big.flow_control.rejected
    assert len(throttled) * 3 >= len(big.requests) - 3  # a third of all calls were refused
    assert {r.method for r in big.requests if r.status == 429} >= {"GET", "POST", "PATCH"}
    for kid in children(ctx, ctx.store.get(batch.id)):
        history = ctx.reporter.history(kid.id)
        # each throttled call was retried by the client, after its Retry-After: no step of
        # any migration had to be retried, none failed
        kinds = {e.kind for e in history}
        assert EventKind.STEP_FAILED not in kinds and EventKind.STEP_RETRYING not in kinds
    for i in range(1, CLUSTERS + 1):
        conditions = big.node(f"node-{i}")["status"]["conditions"]
        assert any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
