"""The target's API down for longer than the join timeout, right after the node agent started."""

from __future__ import annotations

import time

from joinops.requests.lifecycle import State
from tests.support.engine import approved_request
from tests.support.faults import finals, node_ready
from workers import material_steps as steps
from workers.runner import run_request

NODE = "a-w-1"
JOIN_SECONDS = 3
API_SECONDS = 1


def test_target_down_past_the_join_timeout_fails_clearly_in_time(world, make_ctx, monkeypatch):
    a, b = world.cluster("clusterA"), world.cluster("clusterB")
    agent_done: list[float] = []

    def take_the_target_down(event) -> None:  # type: ignore[no-untyped-def]
        if event.step == "agent" and event.kind == "step-succeeded":
            agent_done.append(time.monotonic())
            b.faults.add(reachable=False)

    attempted: list[str] = []
    delete_token = steps.material.delete_token

    def delete_token_recorded(target, token_id):  # type: ignore[no-untyped-def]
        attempted.append(token_id)
        delete_token(target, token_id)

    monkeypatch.setattr(steps.material, "delete_token", delete_token_recorded)
    ctx = make_ctx(
        hooks=[take_the_target_down],
        timeouts={"join": f"{JOIN_SECONDS}s", "api": f"{API_SECONDS}s"},
        agent={"return_to_source": False},  # the ending without a way back; with one: below
    )
    request = approved_request(ctx, NODE, "clusterA", "clusterB")

    assert run_request(ctx, request.id) is State.FAILED
    failed_after = time.monotonic() - agent_done[0]

    # reported once the join timeout has passed, not before (how soon after: a busy machine's)
    assert failed_after >= JOIN_SECONDS, failed_after
    final = ctx.store.get(request.id)
    assert final.failed_step == "wait-joined"
    history = ctx.reporter.history(request.id)
    assert len(finals(history)) == 1 and finals(history)[0].text == final.outcome
    # where the node is, how to look, what to do
    assert "`a-w-1` did not become Ready in clusterB within 3 s" in final.outcome
    assert "it has left clusterA" in final.outcome
    assert f"`journalctl -u joinops-join-{request.id}`" in final.outcome
    assert f"/join retry {request.id}" in final.outcome
    assert "unexpected error" not in final.outcome
    assert world.join_failure(NODE) is not None  # the host could not reach clusterB either
    assert b.node(NODE) is None
    assert a.node(NODE) is not None and not node_ready(a, NODE)  # left behind, NotReady

    assert "clusterB's API did not answer at the end of the wait" in final.outcome

    # the token's deletion was tried; the target refused every connection, so it is still
    # there: the outcome says so and names it, and its id is kept for the retry to delete
    token_id = ctx.records.get(request.id, "join-material").data["token_id"]
    assert attempted and set(attempted) == {token_id}
    assert b.secret("kube-system", f"bootstrap-token-{token_id}") is not None
    assert "Its bootstrap token could not be deleted (clusterB did not answer)" in final.outcome
    assert f"kube-system/bootstrap-token-{token_id}" in final.outcome
    assert "has been deleted" not in final.outcome
    assert ctx.records.get(request.id, "join-material").data["token_ids"] == [token_id]


def test_target_down_mid_join_the_node_returns_to_its_source(world, make_ctx):
    """The target's API server gone right after the agent started: the kubelet's TLS bootstrap
    cannot reach it, kubeadm join fails, and the agent takes the node back into the source."""
    a, b = world.cluster("clusterA"), world.cluster("clusterB")

    def take_the_target_down(event) -> None:  # type: ignore[no-untyped-def]
        if event.step == "agent" and event.kind == "step-succeeded":
            b.faults.add(reachable=False)

    ctx = make_ctx(
        hooks=[take_the_target_down],
        timeouts={"join": f"{JOIN_SECONDS}s", "api": f"{API_SECONDS}s"},
    )
    request = approved_request(ctx, NODE, "clusterA", "clusterB")

    assert run_request(ctx, request.id) is State.RETURNED, ctx.store.get(request.id).outcome

    final = ctx.store.get(request.id)
    assert "join into clusterB failed (" in final.outcome
    assert "`a-w-1` is back in clusterA as a worker, schedulable again" in final.outcome
    assert node_ready(a, NODE) and not a.node(NODE)["spec"].get("unschedulable")
    said = " ".join(e.text for e in ctx.reporter.history(request.id))
    assert f"{NODE}` left there by the failed join" in said  # the target could not be asked
