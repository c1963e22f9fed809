"""Kubernetes APIs answering 500s and timing out for a while: the steps retry and succeed."""

from __future__ import annotations

from joinops.events import GLOBAL_STREAM, Event
from joinops.lifecycle import State
from joinops.steprecords import Outcome
from tests.support.engine import approved_request
from tests.support.faults import (
    AGENT_NAMESPACE,
    finals,
    leftovers,
    node_ready,
    tokens_created,
    tokens_deleted,
)
from workers.runner import run_request

NODE = "a-w-1"
STEPS = ["check", "join-material", "cordon", "drain", "agent", "wait-joined", "cleanup"]


def test_500s_and_timeouts_on_source_and_target_are_retried_and_the_move_succeeds(world, make_ctx):
    a, b = world.cluster("clusterA"), world.cluster("clusterB")
    for i in range(3):
        a.add_pod(NODE, f"web-{i}", labels={"app": "web"}, owner_kind="ReplicaSet")
    ctx = make_ctx(timeouts={"api": "2s"})  # one API call; a held call times out after it
    request = approved_request(ctx, NODE, "clusterA", "clusterB")

    # the target fails the token's creation once (join-material), the source the cordon twice
    b.faults.add(status=500, path_contains="/namespaces/kube-system/secrets", method="POST")
    a.faults.add(status=503, path_contains=f"/api/v1/nodes/{NODE}", method="PATCH", times=2)
    # the source takes too long to answer the agent pod's creation, though it does create it;
    # the target too long to label the node (cleanup), though it does label it
    a.faults.add(
        latency_seconds=3, path_contains=f"/namespaces/{AGENT_NAMESPACE}/pods", method="POST"
    )
    b.faults.add(latency_seconds=3, path_contains=f"/api/v1/nodes/{NODE}", method="PATCH")

    assert run_request(ctx, request.id) is State.SUCCEEDED, ctx.store.get(request.id).outcome

    history = ctx.reporter.history(request.id)
    retrying = [(e.step, e.text) for e in history if e.kind == "step-retrying"]
    assert [step for step, _ in retrying] == [
        "join-material",
        "cordon",
        "cordon",
        "agent",
        "cleanup",
    ]
    texts = dict(retrying)
    assert texts["join-material"].startswith("clusterB: create secrets/bootstrap-token-")
    assert "HTTP 500" in texts["join-material"]
    assert "clusterA: patch nodes/a-w-1 failed: HTTP 503" in texts["cordon"]
    assert texts["agent"].startswith("clusterA: the API server at https://127.0.0.1:")
    assert "did not answer (ReadTimeoutError)" in texts["agent"]
    assert texts["cleanup"].startswith("clusterB: the API server")
    # the Slack bot relays the global stream into the request's thread: they are there too
    relayed = [
        Event.from_json(fields[b"event"].decode()) for _, fields in ctx.redis.xrange(GLOBAL_STREAM)
    ]
    assert [e.step for e in relayed if e.kind == "step-retrying"] == [s for s, _ in retrying]

    # every step succeeded in its first run; exactly one final state
    records = ctx.records.all(request.id)
    assert {s: (r.outcome, r.attempts) for s, r in records.items()} == dict.fromkeys(
        STEPS, (Outcome.SUCCEEDED, 1)
    )
    assert len(finals(history)) == 1

    # the node moved once, by one agent; one token made (the refused one never existed)
    assert node_ready(b, NODE) and a.node(NODE) is None
    assert b.node(NODE)["metadata"]["labels"]["node-role.kubernetes.io/worker"] == ""
    host_events = [(e.kind, e.cluster) for e in world.events if e.subject == NODE]
    assert host_events == [("host-reset", "clusterA"), ("host-joined", "clusterB")]
    assert world.join_failures == []
    assert tokens_created(b) == 1 and len(set(tokens_deleted(b))) == 1
    assert leftovers([a, b]) == []
