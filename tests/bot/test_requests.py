"""Requests and decisions without a worker: refusals, approvers, rejection, expiry, the
questions (`help`, `clusters`, `status`, `list`), cancel and retry refusals, bad input."""

from __future__ import annotations

import time

import pytest

from joinops.requests.audit import Action, AuditLog
from joinops.requests.events import EventKind, RedisEventLog
from joinops.requests.lifecycle import State
from kubesim import NodeSpec
from tests.bot.harness import (
    APPROVER,
    CHANNEL,
    GROUP_MEMBER,
    REQUESTER,
    STRANGER,
    HeldClusterRequest,
    ack_text,
    buttons,
    text_of,
)

REFUSED = [
    ("taken from clusterA to clusterB", "clusterB already has a node named `taken`"),
    ("b-w-1 from clusterB to clusterA", "Kubelet v1.32.2 on `b-w-1` is newer than clusterA's"),
    ("b-cp-1 from clusterB to host-1", "`b-cp-1` is the last control plane of clusterB"),
    (
        "a-w-1 from clusterA to bare as control-plane",
        "bare has no `controlPlaneEndpoint` in its kubeadm configuration",
    ),
]


def test_each_rule_refuses_with_its_reason_and_no_buttons(bot):
    for text, reason in REFUSED:
        delivery, _ = bot.slash(text)
        assert delivery.status == 200
        message = bot.sim.wait_for(
            lambda reason=reason: next((m for m in bot.messages() if reason in text_of(m)), None)
        )
        shown = text_of(message)
        assert buttons(message) == [], text
        assert shown.startswith("Refused: move"), shown
        assert "nothing was done and nothing waits for approval" in shown
        assert shown.index(":no_entry: *Refused:*") < shown.find(":warning:") or (
            ":warning:" not in shown
        )
    assert bot.ctx.store.recent(10) == []  # nothing that could be approved was stored
    assert bot.jobs() == []
    refused = [e for e in AuditLog(bot.redis).entries() if e.action is Action.REFUSED]
    assert len(refused) == len(REFUSED)


def test_a_single_node_source_says_plainly_that_it_is_destroyed(bot):
    bot.slash("node-1 from host-1 to clusterB as control-plane")
    message = bot.wait_message()
    request = bot.request_from_message(message)
    shown = text_of(message)
    assert ":warning: *Warning:* This destroys host-1" in shown
    assert request.destroys_source and request.from_control_plane
    approve = next(
        e
        for block in message["blocks"]
        if block["type"] == "actions"
        for e in block["elements"]
        if e["action_id"] == "join_approve"
    )
    assert approve["confirm"]["title"]["text"] == "Destroy the source cluster?"


def test_the_requester_may_not_approve_their_own_request(make_bot):
    bot = make_bot(approvers=[REQUESTER, APPROVER])
    bot.slash("a-w-1 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    _, rid = bot.approve(request.id, REQUESTER)
    assert "someone else must approve it. Nothing changed." in bot.wait_answer(rid)
    assert bot.request(request.id).state is State.PENDING
    assert buttons(bot.root(request.id))
    assert bot.jobs() == []
    _, rid = bot.click("join_reject", request.id, REQUESTER)  # rejecting their own: allowed
    bot.wait_root(request.id, lambda t: f"Rejected by <@{REQUESTER}>" in t)


def test_self_approval_when_the_policy_allows_it(make_bot):
    bot = make_bot(approvers=[REQUESTER], policy={"allow_self_approval": True})
    bot.slash("a-w-1 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    bot.approve(request.id, REQUESTER)
    bot.wait_root(request.id, lambda t: f"Approved by <@{REQUESTER}>" in t)
    assert bot.jobs() == [request.id]


def test_only_approvers_decide_and_group_members_are_approvers(bot):
    bot.slash("a-w-1 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    for action in ("join_approve", "join_reject"):
        _, rid = bot.click(action, request.id, STRANGER)
        assert "you are not one of them. Nothing changed." in bot.wait_answer(rid)
    assert bot.request(request.id).state is State.PENDING
    assert bot.jobs() == []
    assert buttons(bot.root(request.id))

    delivery, rid = bot.approve(request.id, GROUP_MEMBER)
    assert delivery.status == 200
    root = bot.wait_root(request.id, lambda t: f"Approved by <@{GROUP_MEMBER}> at" in t)
    assert buttons(root) == [("join_cancel", request.id)]  # queued, no worker: still cancellable
    assert bot.request(request.id).state is State.APPROVED
    assert bot.jobs() == [request.id]
    assert bot.answers(rid) == []
    assert len(bot.sim.calls_to("usergroups.users.list")) == 1  # cached between clicks


def test_reject_ends_the_request_and_later_clicks_are_told(bot):
    bot.slash("a-w-1 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    bot.click("join_reject", request.id, APPROVER)
    root = bot.wait_root(request.id, lambda t: "Rejected: nothing was done." in t)
    assert buttons(root) == []
    assert f"Rejected by <@{APPROVER}> at" in text_of(root)
    replies = bot.wait_thread(request.id, lambda r: r)
    assert replies == [replies[0]] and f"<@{REQUESTER}>, nothing was done." in replies[0]
    _, rid = bot.approve(request.id, GROUP_MEMBER)
    assert f"already rejected by <@{APPROVER}>" in bot.wait_answer(rid)
    assert bot.request(request.id).state is State.REJECTED
    assert bot.jobs() == []


def test_a_click_after_the_expiry_expires_the_request(make_bot):
    offset = [0.0]
    bot = make_bot(clock=lambda: time.time() + offset[0])
    bot.slash("a-w-1 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    offset[0] = 31 * 60  # the approval timeout is 30 min; the scheduled expiry is late
    _, rid = bot.approve(request.id)
    assert "expired, not run" in bot.wait_answer(rid)
    root = bot.wait_root(request.id, lambda t: "expired, not run" in t)
    assert buttons(root) == []
    assert bot.request(request.id).state is State.EXPIRED
    assert bot.jobs() == []
    replies = bot.wait_thread(request.id, lambda r: r)
    assert replies[-1].endswith("expired, not run.")


def test_rules_that_refuse_at_approval_fail_the_request(bot, world):
    bot.slash("a-w-2 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    world.cluster("clusterB").add_node(NodeSpec("a-w-2"))
    _, rid = bot.approve(request.id)
    assert "failed instead of running" in bot.wait_answer(rid)
    assert bot.request(request.id).state is State.FAILED
    assert bot.jobs() == []
    replies = bot.wait_thread(request.id, lambda r: r and r[-1].startswith(":red_circle:"))
    assert "clusterB already has a node named `a-w-2`" in replies[-1]
    bot.wait_root(request.id, lambda t: "Failed at step `check`" in t)


def test_cancel_before_approval_and_who_may_cancel(bot):
    bot.slash("a-w-1 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    _, rid = bot.slash(f"cancel {request.id}", user=STRANGER)
    assert "Only the requester or an approver can cancel" in bot.wait_answer(rid)
    assert bot.request(request.id).state is State.PENDING

    _, rid = bot.slash(f"cancel {request.id}")
    assert f"Cancelled `{request.id}` before it started" in bot.wait_answer(rid)
    root = bot.wait_root(request.id, lambda t: "Cancelled;" in t)
    assert buttons(root) == []
    replies = bot.wait_thread(request.id, lambda r: r)
    assert replies[-1].startswith(f":white_circle: <@{REQUESTER}> Cancelled before")
    _, rid = bot.slash(f"cancel {request.id}")
    assert "was cancelled already: there is nothing to cancel" in bot.wait_answer(rid)


def test_cancel_after_the_agent_started_explains_it_cannot_be_stopped(bot):
    bot.slash("a-w-1 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    store = bot.ctx.store
    store.transition(request.id, State.APPROVED, decided_by=APPROVER)
    store.transition(request.id, State.RUNNING)
    assert store.set_flag_if_state(request.id, "agent_started", {State.RUNNING})
    _, rid = bot.slash(f"cancel {request.id}")
    answer = bot.wait_answer(rid)
    assert "Too late to cancel" in answer and "cannot be stopped" in answer
    assert bot.request(request.id).state is State.RUNNING


def test_retry_only_of_a_failed_request(bot):
    bot.slash("a-w-1 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    _, rid = bot.slash(f"retry {request.id}")
    assert "Only a failed request can be retried" in bot.wait_answer(rid)
    assert bot.request(request.id).state is State.PENDING


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a-w-1 form clusterA to clusterB", "Did you mean `from`?"),
        ("a-w-1 from clusterZ to clusterB", "Known clusters: `bare`, `clusterA`"),
        ("a-w-1 from clusterA to clusterB as master", "Did you mean `control-plane`?"),
        ("stauts", "Did you mean `status`?"),
        ("cancel", "`cancel` needs a request id"),
    ],
)
def test_bad_input_is_answered_in_the_ack_with_the_form_to_type(bot, text, expected):
    delivery, _ = bot.slash(text)
    assert delivery.status == 200
    body = delivery.json()
    assert body["response_type"] == "ephemeral"
    assert expected in ack_text(delivery) and "Usage: `/join" in ack_text(delivery)
    assert bot.sim.calls_to("chat.postMessage") == []


@pytest.mark.parametrize(
    ("text", "ack", "header"),
    [
        ("ignition clusterB", "Checking clusterB…", "Ignition file: a new worker for clusterB"),
        ("a-w-1 a-w-2 from clusterA to clusterB", "Looking for 2 nodes", "Move 2 nodes"),
        ("all from clusterA to clusterB", "Checking every node of clusterA", "Refused: move 6"),
        ("a-w-1 to clusterB", "Looking for `a-w-1` in the clusters", "Move a-w-1: clusterA"),
    ],
)
def test_ignition_several_nodes_and_whole_clusters_are_answered_in_the_channel(
    bot, world, text, ack, header
):
    clusters = list(world.clusters.values())
    with HeldClusterRequest(clusters) as read:  # the check's first cluster read waits for us
        delivery, _ = bot.slash(text)
        # acknowledged while the worker's check was still inside that read: the ack waits on
        # no cluster
        assert delivery.status == 200 and ack in ack_text(delivery)
        read.wait_arrived()
        assert bot.messages() == []
    message = bot.wait_message(timeout=20)
    assert text_of(message).startswith(header)


def test_help(bot):
    delivery, _ = bot.slash("help")
    assert "`/join NODE from SOURCE to TARGET [as worker|control-plane] [force]`" in ack_text(
        delivery
    )
    empty, _ = bot.slash("")
    assert ack_text(empty) == ack_text(delivery)


def test_clusters_are_surveyed_after_the_ack(bot, world):
    world.cluster("bare").faults.add(reachable=False)
    with HeldClusterRequest([world.cluster("clusterA")]) as slow:  # clusterA as slow as we like
        delivery, rid = bot.slash("clusters")
        assert delivery.status == 200 and "Asking each cluster" in ack_text(delivery)
        slow.wait_arrived()  # the survey is under way, waiting for clusterA: no answer yet
        assert bot.sim.responses(rid) == []
    answer = bot.wait_answer(rid)
    assert "*clusterB*: v1.32.2, 3 nodes (1 control planes), endpoint `cp.b.test:6443`" in answer
    assert "*clusterA*: v1.31.4, 6 nodes" in answer
    assert ":red_circle: *bare*: unreachable" in answer


def test_a_slow_cluster_never_delays_the_ack(bot, world):
    # clusterA does not answer the check's read of the node until the ack has come
    with HeldClusterRequest([world.cluster("clusterA")], path="/api/v1/nodes/a-w-1") as slow:
        delivery, _ = bot.slash("a-w-1 from clusterA to clusterB")
        assert delivery.status == 200
        assert "Checking `a-w-1` in clusterA and clusterB" in ack_text(delivery)
        slow.wait_arrived()
        assert bot.messages() == []
    bot.wait_message(timeout=20)


def test_status_and_list(bot):
    _, rid = bot.slash("status")
    assert f"<@{REQUESTER}> has no requests yet" in bot.wait_answer(rid)
    _, rid = bot.slash("status req-00000000")
    assert "There is no request `req-00000000`" in bot.wait_answer(rid)
    _, rid = bot.slash("list")
    assert "No active requests." in bot.wait_answer(rid)

    bot.slash("a-w-1 from clusterA to clusterB")
    first = bot.request_from_message(bot.wait_message())
    bot.slash("a-w-2 from clusterA to clusterB", user=APPROVER)
    second = bot.sim.wait_for(lambda: len(bot.messages()) == 2 and bot.messages()[-1])
    second_request = bot.request_from_message(second)

    _, rid = bot.slash("list")
    listed = bot.wait_answer(rid)
    assert "*Active requests (2)*" in listed
    assert f"`{first.id}` `a-w-1`: clusterA → clusterB, pending" in listed
    assert f"`{second_request.id}` `a-w-2`" in listed
    _, rid = bot.slash("status")
    status = bot.wait_answer(rid)
    assert f"*Request `{first.id}`*: pending" in status and "No step has run yet." in status


def test_every_decision_is_an_event_on_the_request_stream(bot):
    bot.slash("a-w-1 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    bot.click("join_reject", request.id, APPROVER)
    bot.wait_root(request.id, lambda t: "Rejected" in t)
    states = [
        e.state for e in RedisEventLog(bot.redis).history(request.id) if e.kind is EventKind.STATE
    ]
    assert states == ["rejected"]
    actions = [(e.action, e.actor) for e in AuditLog(bot.redis).entries()]
    assert actions == [(Action.REQUESTED, REQUESTER), (Action.REJECTED, APPROVER)]
    assert bot.root(request.id)["ts"] in bot.sim.messages(CHANNEL)
