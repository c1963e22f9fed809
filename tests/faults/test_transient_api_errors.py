"""Kubernetes APIs answering 500s and timing out for a while: the steps retry and succeed."""

from __future__ import annotations

import threading

from joinops.requests.events import GLOBAL_STREAM, Event
from joinops.requests.lifecycle import State
from joinops.requests.steprecords import Outcome
from tests.support.engine import approved_request
from tests.support.faults import (
    AGENT_NAMESPACE,
    HeldCall,
    finals,
    leftovers,
    node_ready,
    tokens_created,
    tokens_deleted,
)
from workers.runner import run_request

NODE = "a-w-1"
CLUSTER_INFO = "/api/v1/namespaces/kube-public/configmaps"
STEPS = ["check", "join-material", "probe", "cordon", "drain", "agent", "wait-joined", "cleanup"]


def test_500s_and_timeouts_on_source_and_target_are_retried_and_the_move_succeeds(world, make_ctx):
    a, b = world.cluster("clusterA"), world.cluster("clusterB")
    for i in range(3):
        a.add_pod(NODE, f"web-{i}", labels={"app": "web"}, owner_kind="ReplicaSet")
    ctx = make_ctx(timeouts={"api": "2s"})  # one API call; a held call times out after it
    request = approved_request(ctx, NODE, "clusterA", "clusterB")

    # the target fails the token's creation once (join-material), the source the cordon twice;
    # a 5xx saying no Retry-After is the step's to retry (with one, the client retries the call
    # itself after it, as client-go does: tests/engine/test_api_retry_after.py)
    b.faults.add(status=500, path_contains="/namespaces/kube-system/secrets", method="POST")
    a.faults.add(
        status=503, path_contains=f"/api/v1/nodes/{NODE}", method="PATCH", times=2, retry_after=0
    )
    # the target fails a read of its cluster-info once (is the token signed? before the agent);
    # the 4th read: `check` and both attempts of `join-material` read it first (the CA pins)
    b.faults.add(status=500, path_contains=CLUSTER_INFO, method="GET", nth=4)
    # the source takes too long to answer the agent pod's creation (its third pod, after the
    # two probes), though it does create it; the target too long to label the node (cleanup),
    # though it does label it
    a.faults.add(
        latency_seconds=3,
        path_contains=f"/namespaces/{AGENT_NAMESPACE}/pods",
        method="POST",
        nth=3,
    )
    b.faults.add(latency_seconds=3, path_contains=f"/api/v1/nodes/{NODE}", method="PATCH")

    assert run_request(ctx, request.id) is State.SUCCEEDED, ctx.store.get(request.id).outcome

    history = ctx.reporter.history(request.id)
    retrying = [(e.step, e.text) for e in history if e.kind == "step-retrying"]
    steps = ["join-material", "cordon", "cordon", "agent", "agent", "cleanup"]
    assert [step for step, _ in retrying] == steps
    texts = [text for _, text in retrying]
    assert texts[0].startswith("clusterB: create secrets/bootstrap-token-")
    assert "HTTP 500" in texts[0]
    assert texts[1] == texts[2]
    assert "clusterA: patch nodes/a-w-1 failed: HTTP 503" in texts[1]
    assert "clusterB: get configmaps/cluster-info failed: HTTP 500" in texts[3]
    assert texts[4].startswith("clusterA: the API server at https://127.0.0.1:")
    assert "did not answer (ReadTimeoutError)" in texts[4]
    assert texts[5].startswith("clusterB: the API server")
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


def test_a_target_failing_past_the_retries_before_the_agent_rolls_back(world, make_ctx):
    a, b = world.cluster("clusterA"), world.cluster("clusterB")
    for i in range(3):
        a.add_pod(NODE, f"web-{i}", labels={"app": "web"}, owner_kind="ReplicaSet")
    ctx = make_ctx()
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    # the agent step first checks that the target signed the token, as the node will: the
    # target answers those reads with 500 every time (from the 3rd: `check` and `join-material`
    # read it first, for the CA pins)
    b.faults.add(status=500, path_contains=CLUSTER_INFO, method="GET", times=None, nth=3)

    assert run_request(ctx, request.id) is State.FAILED

    final = ctx.store.get(request.id)
    assert final.failed_step == "agent" and not final.agent_started
    history = ctx.reporter.history(request.id)
    assert [e.step for e in history if e.kind == "step-retrying"] == ["agent"] * 3  # bounded
    assert len(finals(history)) == 1
    # what failed, on which cluster, and where the node is: nothing was done to it
    assert "clusterB: get configmaps/cluster-info failed: HTTP 500" in final.outcome
    assert "unexpected error" not in final.outcome
    assert f"`{NODE}` is still in clusterA, its schedulability restored" in final.outcome
    assert a.pod(AGENT_NAMESPACE, f"joinops-agent-{request.id}") is None
    assert node_ready(a, NODE) and not a.node(NODE)["spec"].get("unschedulable")
    assert b.node(NODE) is None
    host_events = [e.kind for e in world.events if e.subject == NODE]
    assert host_events == []
    b.faults.clear()
    assert leftovers([a, b]) == []  # the token was deleted in the rollback


def test_an_unanswered_agent_creation_is_not_reported_as_nothing_done(world, make_ctx):
    """The source takes the agent pod's creation, then stops answering for good."""
    a, b = world.cluster("clusterA"), world.cluster("clusterB")
    ctx = make_ctx(timeouts={"api": "1s"})
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    # the agent's pod: the third the source is asked to create, after the two probes
    held = HeldCall(a, f"/namespaces/{AGENT_NAMESPACE}/pods", "POST", seconds=1.5, nth=3)

    def cut_the_source_off() -> None:
        held.wait_held()
        a.faults.add(reachable=False)  # cuts the held connection; the server still creates it

    cutter = threading.Thread(target=cut_the_source_off)
    cutter.start()
    assert run_request(ctx, request.id) is State.FAILED
    cutter.join()

    final = ctx.store.get(request.id)
    assert final.failed_step == "agent" and final.agent_started
    # the agent did start: the host was reset and joined the target (its token still valid)
    assert [e.kind for e in world.events if e.subject == NODE] == ["host-reset", "host-joined"]
    assert node_ready(b, NODE)
    # so the outcome must not say that the node is untouched in the source
    assert "is still in clusterA" not in final.outcome
    assert "Where it is: not known" in final.outcome
    assert "may have started" in final.outcome
    assert "`kubectl get nodes` in clusterB and in clusterA" in final.outcome
    assert "clusterA: the API server at" in final.outcome
