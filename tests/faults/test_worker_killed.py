"""A real `joinops worker` killed with SIGKILL inside each step in turn; a second one resumes.

The kill lands inside the step for sure: the test waits for the step's `step-started` event and
for the simulated API server to be holding one of the step's calls (a latency fault), then kills
the worker's whole process group. The held call is then carried out by the server with nobody
listening, the worst moment for a step that must be safe to run twice. A second worker finds the
request once the first one's locks expire and finishes it from the interrupted step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from kubernetes import client

from joinops.queue import enqueue_migration
from joinops.requests.lifecycle import State
from joinops.requests.steprecords import Outcome
from kubesim import World
from tests.support.clusters import write_config
from tests.support.engine import (
    approved_request,
    kill_worker,
    start_worker,
    stop_worker,
    wait_event,
    wait_final,
)
from tests.support.faults import (
    AGENT_NAMESPACE,
    HeldCall,
    finals,
    leftovers,
    node_ready,
    tokens_created,
    tokens_deleted,
    worker_running,
)

STEPS = ["check", "join-material", "probe", "cordon", "drain", "agent", "wait-joined", "cleanup"]
NODE = "a-w-1"
# How long the simulated API server holds the step's call: long enough for the kill to land in
# it even on a loaded machine. The second worker can resume only once the first one's locks
# have expired (timeouts.lock: 2 s, renewed every 2/3 s), so usually after the held call was
# answered; the steps must cope with either order, and the assertions hold for both.
HOLD_SECONDS = 1.0


@dataclass(frozen=True)
class KillPoint:
    """Where, inside a step, the worker dies: a call the step makes, held by the server."""

    cluster: str
    path: str
    method: str
    nth: int = 1  # the nth such call (the source's pods: facts probe, preflight probe, agent)


KILL_POINTS = {
    "check": KillPoint("clusterA", f"/api/v1/nodes/{NODE}", "GET"),  # the node still exists?
    # after the token was created in the target, the agent's Secret in the source
    "join-material": KillPoint("clusterA", f"/api/v1/namespaces/{AGENT_NAMESPACE}/secrets", "POST"),
    # the preflight pod's creation (the facts pod's was the first)
    "probe": KillPoint("clusterA", f"/api/v1/namespaces/{AGENT_NAMESPACE}/pods", "POST", 2),
    "cordon": KillPoint("clusterA", f"/api/v1/nodes/{NODE}", "PATCH"),
    "agent": KillPoint("clusterA", f"/api/v1/namespaces/{AGENT_NAMESPACE}/pods", "POST", 3),
    # the watch for the node, asked with no resourceVersion (it begins with the node as it is)
    "wait-joined": KillPoint(
        "clusterB", "/api/v1/nodes?allowWatchBookmarks=true&fieldSelector=metadata.name", "GET"
    ),
    "cleanup": KillPoint("clusterA", f"/api/v1/nodes/{NODE}", "DELETE"),
}


def hold_the_drain(world: World) -> Callable[[], None]:
    """A disruption budget keeps one pod on the node; returns what lets it go."""
    a = world.cluster("clusterA")
    a.add_pod(NODE, "db-0", labels={"app": "db"}, owner_kind="StatefulSet")
    a.add_pdb("db", "default", {"app": "db"}, min_available=1)

    def release() -> None:
        policy = client.PolicyV1Api(a.api_client())
        policy.delete_namespaced_pod_disruption_budget("db", "default")
        policy.api_client.close()

    return release


@pytest.mark.parametrize("step", STEPS)
def test_worker_killed_in_a_step_is_resumed_and_finishes_once(
    step, world, make_ctx, tmp_path, redis_url
):
    config = write_config(world, tmp_path)
    # Two workers, started together: whichever takes the job is killed, the other resumes it.
    workers = [start_worker(config, redis_url, tmp_path / f"worker-{i}.log") for i in (1, 2)]
    try:
        a, b = world.cluster("clusterA"), world.cluster("clusterB")
        for i in range(3):
            a.add_pod(NODE, f"web-{i}", labels={"app": "web"}, owner_kind="ReplicaSet")
        release = hold_the_drain(world) if step == "drain" else None
        ctx = make_ctx()
        request = approved_request(ctx, NODE, "clusterA", "clusterB")
        point = KILL_POINTS.get(step)
        held = (
            HeldCall(
                world.cluster(point.cluster), point.path, point.method, HOLD_SECONDS, point.nth
            )
            if point
            else None
        )
        enqueue_migration(ctx.redis, ctx.settings, request.id)

        wait_event(ctx, request.id, lambda e: e.step == step and e.kind == "step-started")
        if held:
            held.wait_held()
        else:  # the drain: every pod but the one the budget protects is gone
            a.wait_for(lambda: [p["metadata"]["name"] for p in a.pods(node=NODE)] == ["db-0"], 20)
        first = worker_running(ctx.redis, request.id, workers)
        kill_worker(first)
        assert ctx.records.get(request.id, step).outcome is Outcome.RUNNING
        assert ctx.store.get(request.id).state is State.RUNNING
        if held:  # the server carries the call out for nobody
            held.wait_answered()
        if release:
            release()
        final = wait_final(ctx, request.id, timeout=60)
        second = worker_running(ctx.redis, request.id, workers)
    finally:
        for worker in workers:
            stop_worker(worker)
    assert second is not first

    # finished exactly once, and well
    assert final.state == "succeeded", final.text
    history = ctx.reporter.history(request.id)
    assert len(finals(history)) == 1
    assert ctx.store.get(request.id).state is State.SUCCEEDED
    assert any(f"Resumed after a worker restart, at step `{step}`" in e.text for e in history)
    assert node_ready(b, NODE)
    assert a.node(NODE) is None
    assert leftovers([a, b]) == []

    # no finished step ran again; the interrupted one ran twice
    records = ctx.records.all(request.id)
    assert {s: r.outcome for s, r in records.items()} == dict.fromkeys(STEPS, Outcome.SUCCEEDED)
    assert {s: r.attempts for s, r in records.items()} == {s: 2 if s == step else 1 for s in STEPS}

    # one bootstrap token, unless its step was the one interrupted: then the first is deleted
    minted = tokens_created(b)
    assert minted == (2 if step == "join-material" else 1)
    assert len(set(tokens_deleted(b))) == minted  # each deleted (and none left, above)

    # every pod evicted once; one reset and one join of the host, nothing failed on it
    accepted = [r.name for r in list(a.requests) if r.subresource == "eviction" and r.status < 300]
    expected = ["db-0"] if step == "drain" else []
    assert sorted(accepted) == sorted(["web-0", "web-1", "web-2", *expected])
    host_events = [(e.kind, e.cluster) for e in world.events if e.subject == NODE]
    assert host_events == [("host-reset", "clusterA"), ("host-joined", "clusterB")]
    assert world.join_failures == []
