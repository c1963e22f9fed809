"""Redis restarted (with persistence on) while a migration is in the drain: it finishes.

Redis runs with an append-only file fsynced on every write (the chart's bundled Redis fsyncs
every second; a clean SHUTDOWN, as here, loses nothing either way). It stays down for longer
than the drain goes without reading the request (it polls for a cancellation at least every
5 s), so the engine meets the outage for sure.

What the engine does today: the step's Redis call fails, so does recording the failure, and rq,
unable to record the job's end, stops the worker process (status 1); a worker started while Redis
is still down exits too. The request is never marked failed: it stays `running` with its step
records, and the next worker started once Redis is back resumes it from the drain. The test
plays the operator's supervisor (restart on exit), as the chart's Deployment does.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client

from joinops.queue import enqueue_migration
from joinops.requests.lifecycle import State
from joinops.requests.steprecords import Outcome
from tests.support.clusters import write_config
from tests.support.engine import approved_request, start_worker, stop_worker, wait_event, wait_final
from tests.support.faults import RedisServer, Supervisor, finals, leftovers, node_ready

NODE = "a-w-1"
STEPS = ["check", "join-material", "probe", "cordon", "drain", "agent", "wait-joined", "cleanup"]
OUTAGE_SECONDS = 6.0


@pytest.fixture
def redis_server(tmp_path) -> Iterator[RedisServer]:
    directory = tmp_path / "redis"
    directory.mkdir()
    server = RedisServer(directory)
    server.start()
    yield server
    server.stop()


def test_redis_restarted_mid_drain_the_migration_finishes(world, make_ctx, tmp_path, redis_server):
    a, b = world.cluster("clusterA"), world.cluster("clusterB")
    for i in range(3):
        a.add_pod(NODE, f"web-{i}", labels={"app": "web"}, owner_kind="ReplicaSet")
    a.add_pod(NODE, "db-0", labels={"app": "db"}, owner_kind="StatefulSet")
    a.add_pdb("db", "default", {"app": "db"}, min_available=1)  # holds the drain
    config = write_config(world, tmp_path, timeouts={"drain": "60s"})
    supervisor = Supervisor(
        lambda n: start_worker(config, redis_server.url, tmp_path / f"worker-{n}.log")
    )
    try:
        ctx = make_ctx(url=redis_server.url, timeouts={"drain": "60s"})
        request = approved_request(ctx, NODE, "clusterA", "clusterB")
        enqueue_migration(ctx.redis, ctx.settings, request.id)
        wait_event(ctx, request.id, lambda e: e.step == "drain" and e.kind == "step-started")
        a.wait_for(lambda: [p["metadata"]["name"] for p in a.pods(node=NODE)] == ["db-0"], 20)

        redis_server.restart(down_seconds=OUTAGE_SECONDS)

        # what Redis kept across the restart: the request, mid-drain, and its step records
        assert ctx.store.get(request.id).state is State.RUNNING
        records = ctx.records.all(request.id)
        assert records["cordon"].outcome is Outcome.SUCCEEDED
        assert records["drain"].outcome is Outcome.RUNNING
        policy = client.PolicyV1Api(a.api_client())
        policy.delete_namespaced_pod_disruption_budget("db", "default")
        policy.api_client.close()
        final = wait_final(ctx, request.id, timeout=60)
    finally:
        supervisor.stop(stop_worker)

    assert final.state == "succeeded", final.text
    history = ctx.reporter.history(request.id)
    assert len(finals(history)) == 1
    assert not [e for e in history if e.kind == "step-failed"]  # never failed nor rolled back
    assert ctx.store.get(request.id).state is State.SUCCEEDED
    records = ctx.records.all(request.id)
    assert {s: r.outcome for s, r in records.items()} == dict.fromkeys(STEPS, Outcome.SUCCEEDED)
    assert all(records[s].attempts == 1 for s in ("check", "join-material", "cordon"))
    accepted = [r.name for r in list(a.requests) if r.subresource == "eviction" and r.status < 300]
    assert sorted(accepted) == ["db-0", "web-0", "web-1", "web-2"]  # each once
    assert node_ready(b, NODE) and a.node(NODE) is None
    assert leftovers([a, b]) == []
