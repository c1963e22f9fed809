"""The Cancel button on a request's root message: shown while `/join cancel ID` would stop the
request (pending, approved, running before the node agent), gone once it would not; its click is
`/join cancel ID` by the clicker — the same authorisation, audit entry and answer, ephemeral."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bot.render.batch import batch_message
from bot.render.request import request_message
from bot.views.batch import stored_view
from bot.views.request import request_view
from joinops.requests.audit import Action, AuditLog
from joinops.requests.lifecycle import State
from joinops.requests.store import Request
from kubesim import World
from tests.bot.harness import APPROVER, APPROVER2, REQUESTER, STRANGER, buttons, text_of, until

CANCEL = "join_cancel"


def _cancel_button(message: dict[str, Any]) -> dict[str, Any]:
    return next(
        element
        for block in message["blocks"]
        if block["type"] == "actions"
        for element in block["elements"]
        if element["action_id"] == CANCEL
    )


def _audited(bot: Any, action: Action) -> list[tuple[str, str, str]]:
    return [
        (e.actor, e.request_id, e.detail)
        for e in AuditLog(bot.redis).entries()
        if e.action is action
    ]


def _cancelled_now(request_id: str) -> str:
    return f"Cancelled `{request_id}` before it started: nothing was changed."


def _nothing_to_cancel(request_id: str, state: str) -> str:
    how = {"cancelled": "was cancelled already", "succeeded": "already succeeded"}[state]
    return f"Request `{request_id}` {how}: there is nothing to cancel."


def _final(replies: list[str]) -> bool:
    return any(r.startswith((":tada:", ":red_circle:", ":white_circle:")) for r in replies)


def test_the_requester_cancels_a_pending_request_with_the_button(bot):
    bot.slash("a-w-1 from clusterA to clusterB")
    message = bot.wait_message()
    request = bot.request_from_message(message)
    assert buttons(message)[-1] == (CANCEL, request.id)  # after Approve and Reject
    button = _cancel_button(message)
    assert button["text"]["text"] == "Cancel" and "style" not in button  # not another Reject
    confirm = button["confirm"]
    assert confirm["style"] == "danger"
    assert confirm["title"]["text"] == "Cancel the move of a-w-1?"
    assert "`a-w-1` stays in clusterA" in confirm["text"]["text"]
    assert (confirm["confirm"]["text"], confirm["deny"]["text"]) == ("Cancel the move", "Keep it")

    # the root message's update (the cancel's work, after the ack) waits until the ack has come
    update = bot.sim.holds.add("chat.update", lambda params: params.get("ts") == message["ts"])
    delivery, rid = bot.click(CANCEL, request.id, REQUESTER)
    assert delivery.status == 200 and delivery.body == b""
    update.wait_arrived()
    assert buttons(bot.root(request.id)) == buttons(message)  # not updated yet
    update.release()
    answer = bot.wait_answer(rid)
    assert answer == _cancelled_now(request.id)
    response = bot.sim.responses(rid)[0]
    assert response["response_type"] == "ephemeral" and response["replace_original"] is False
    root = bot.wait_root(request.id, lambda t: "Cancelled;" in t)
    assert buttons(root) == [] and f"Cancelled by <@{REQUESTER}>" in text_of(root)
    replies = bot.wait_thread(request.id, lambda r: r)
    assert len(replies) == 1
    assert replies[0].startswith(f":white_circle: <@{REQUESTER}> Cancelled before")
    assert bot.request(request.id).state is State.CANCELLED and bot.jobs() == []
    assert _audited(bot, Action.CANCELLED) == [(REQUESTER, request.id, "was pending")]

    # The same click again, from the message as it was: nothing changes; the clicker is told.
    _, rid = bot.click(CANCEL, request.id, REQUESTER)
    assert bot.wait_answer(rid) == _nothing_to_cancel(request.id, "cancelled")
    assert bot.relay.idle(10)
    assert bot.thread(request.id) == replies
    assert _audited(bot, Action.CANCELLED) == [(REQUESTER, request.id, "was pending")]


def test_the_button_answers_as_the_command_does(bot):
    """The click and `/join cancel ID` are one code path: the same words for the same case."""
    bot.slash("a-w-1 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    _, typed = bot.slash(f"cancel {request.id}", user=STRANGER)
    _, clicked = bot.click(CANCEL, request.id, STRANGER)
    refusal = bot.wait_answer(clicked)
    assert "Only the requester or an approver can cancel" in refusal
    assert refusal == bot.wait_answer(typed)
    assert bot.request(request.id).state is State.PENDING
    assert (CANCEL, request.id) in buttons(bot.root(request.id))
    assert _audited(bot, Action.DENIED) == [
        (STRANGER, request.id, "cancel: not the requester"),
        (STRANGER, request.id, "cancel: not the requester"),
    ]


def test_simultaneous_clicks_cancel_once_and_the_others_are_told(bot):
    bot.slash("a-w-2 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    clickers = [REQUESTER, APPROVER, REQUESTER, APPROVER2, APPROVER]
    with ThreadPoolExecutor(max_workers=len(clickers)) as pool:
        results = list(pool.map(lambda user: bot.click(CANCEL, request.id, user), clickers))
    assert all(delivery.status == 200 for delivery, _ in results)
    answers = [bot.wait_answer(rid) for _, rid in results]
    assert answers.count(_cancelled_now(request.id)) == 1
    assert answers.count(_nothing_to_cancel(request.id, "cancelled")) == 4
    assert len(_audited(bot, Action.CANCELLED)) == 1
    bot.wait_root(request.id, lambda t: "Cancelled;" in t)
    assert bot.relay.idle(10)
    assert len(bot.thread(request.id)) == 1  # one outcome in the thread


def test_an_approved_request_keeps_cancel_and_an_approver_cancels_it(bot):
    bot.slash("a-w-1 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    bot.approve(request.id)  # no worker here: it stays queued
    root = bot.wait_root(request.id, lambda t: f"Approved by <@{APPROVER}> at" in t)
    assert buttons(root) == [(CANCEL, request.id)]
    assert "waiting for a worker" in text_of(root)

    _, rid = bot.click(CANCEL, request.id, APPROVER2)
    assert bot.wait_answer(rid) == _cancelled_now(request.id)
    root = bot.wait_root(request.id, lambda t: "Cancelled;" in t)
    assert buttons(root) == []
    replies = bot.wait_thread(request.id, _final)
    assert replies[-1].startswith(f":white_circle: <@{REQUESTER}> Cancelled before")
    assert f"(cancelled by <@{APPROVER2}>)" in replies[-1]
    assert bot.request(request.id).state is State.CANCELLED
    assert _audited(bot, Action.CANCELLED) == [(APPROVER2, request.id, "was approved")]


def test_a_running_request_is_cancelled_by_the_button_and_a_finished_one_has_none(
    make_bot, world: World
):
    bot = make_bot(timeouts={"drain": "3s"})
    bot.start_worker()
    a = world.cluster("clusterA")  # a drain that cannot finish: time to click while it runs
    a.add_pod("a-w-2", "held-0", labels={"app": "held"}, owner_kind="StatefulSet")
    a.add_pdb("held", "default", {"app": "held"}, min_available=1)
    bot.slash("a-w-2 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    bot.approve(request.id)
    bot.wait_thread(request.id, lambda r: any("Step 5/8 `drain`" in x for x in r), timeout=60)
    root = bot.wait_root(request.id, lambda t: "Running" in t)
    assert buttons(root) == [(CANCEL, request.id)]

    _, rid = bot.click(CANCEL, request.id, REQUESTER)
    assert bot.wait_answer(rid).startswith(f"Cancelling `{request.id}`: the worker stops")
    replies = bot.wait_thread(request.id, _final, timeout=60)
    assert replies[-1].startswith(f":white_circle: <@{REQUESTER}> Cancelled before the node agent")
    assert not any("Step 6/8" in r for r in replies)
    root = bot.wait_root(request.id, lambda t: "Cancelled;" in t)
    assert buttons(root) == []
    node = a.node("a-w-2")
    assert node is not None and not node["spec"].get("unschedulable")  # put back as it was

    bot.slash("a-w-1 from clusterA to clusterB")
    moved = bot.request_from_message(
        bot.sim.wait_for(lambda: len(bot.messages()) == 2 and bot.messages()[-1], 20)
    )
    bot.approve(moved.id)
    root = bot.wait_root(moved.id, lambda t: "Succeeded" in t, timeout=60)
    assert buttons(root) == []
    _, rid = bot.click(CANCEL, moved.id, REQUESTER)  # a stale message: nothing to cancel
    assert bot.wait_answer(rid) == _nothing_to_cancel(moved.id, "succeeded")


def test_once_the_node_agent_started_the_root_has_no_cancel():
    """The point of no return, rendered: the button goes with it (a click would be refused)."""
    running = Request(
        id="req-0000aaaa",
        node="a-w-1",
        source="clusterA",
        target="clusterB",
        state=State.RUNNING,
        requester=REQUESTER,
        decided_by=APPROVER,
    )
    before = request_message(request_view(running))
    after = request_message(request_view(Request(**{**running.__dict__, "agent_started": True})))
    assert [b.to_dict().get("type") for b in before].count("actions") == 1
    assert [b.to_dict().get("type") for b in after].count("actions") == 0


def test_a_batch_has_cancel_and_the_click_cancels_it_with_its_nodes(bot):
    bot.slash("a-w-1 a-w-2 to clusterB")
    message = bot.wait_message(timeout=20)
    batch = bot.request_from_message(message)
    assert buttons(message)[-1] == (CANCEL, batch.id)
    confirm = _cancel_button(message)["confirm"]
    assert confirm["title"]["text"] == "Cancel the move of 2 nodes?"
    assert confirm["confirm"]["text"] == "Cancel the batch"

    _, rid = bot.click(CANCEL, batch.id, REQUESTER)
    assert "before it started: nothing was moved" in bot.wait_answer(rid)
    kids = batch.extra["children"].split(",")
    until(lambda: {bot.request(i).state for i in kids} == {State.CANCELLED}, 10)
    root = bot.wait_root(batch.id, lambda t: "Cancelled before it started" in t)
    assert buttons(root) == [] and f"Cancelled by <@{REQUESTER}>" in text_of(root)
    replies = bot.wait_thread(batch.id, lambda r: r and r[-1].startswith(":white_circle:"))
    assert replies == [
        f":white_circle: <@{REQUESTER}> cancelled before it started: nothing was moved."
    ]
    assert bot.jobs() == []


def test_a_running_batch_shows_cancel_while_a_node_can_still_stop():
    """Rendered from the records: once every node left has started its agent (or the batch is
    being cancelled already), a click would stop nothing, and the button is gone."""
    batch = Request(
        id="req-0000bbbb",
        node="",
        source="clusterA",
        target="clusterB",
        kind="batch",
        state=State.RUNNING,
        requester=REQUESTER,
        decided_by=APPROVER,
    )
    done = Request(id="req-0000bbb1", node="a-w-1", source="clusterA", target="clusterB")
    done.state = State.SUCCEEDED
    kid = Request(id="req-0000bbb2", node="a-w-2", source="clusterA", target="clusterB")
    kid.state = State.RUNNING

    def actions(kids: list[Request], **extra: str) -> int:
        shown = Request(**{**batch.__dict__, "extra": extra})
        blocks = batch_message(stored_view(shown, kids, max_parallel=2))
        return [b.to_dict().get("type") for b in blocks].count("actions")

    assert actions([done, kid]) == 1
    assert actions([done, Request(**{**kid.__dict__, "agent_started": True})]) == 0
    assert actions([done, kid], cancelled_by=APPROVER) == 0


def test_an_ignition_request_is_cancelled_with_the_button(bot):
    bot.slash("ignition clusterB")
    message = bot.wait_message(timeout=20)
    request = bot.request_from_message(message)
    assert buttons(message)[-1] == (CANCEL, request.id)
    assert _cancel_button(message)["confirm"]["title"]["text"] == "Cancel this Ignition file?"

    _, rid = bot.click(CANCEL, request.id, REQUESTER)
    assert bot.wait_answer(rid) == _cancelled_now(request.id)
    root = bot.wait_root(request.id, lambda t: "Cancelled" in t and "Waiting" not in t)
    assert buttons(root) == []
    replies = bot.wait_thread(request.id, lambda r: r)
    assert replies == [
        f":white_circle: <@{REQUESTER}> cancelled before the file was made: nothing was created."
    ]
    assert bot.request(request.id).state is State.CANCELLED and bot.jobs() == []
