"""`policy.loan_returns_need_approval: true`, end to end: the return of a loan waits in the
loan's thread for an approver, as any request does; rejected, the loan is overdue."""

from __future__ import annotations

from typing import Any

import pytest

from joinops.loans.model import LoanState
from joinops.loans.store import LoanStore
from joinops.requests.lifecycle import State
from tests.bot.harness import APPROVER, APPROVER2, REQUESTER, buttons, text_of, until
from tests.bot.loan_fixtures import (  # the module's world, Redis, worker and bot
    bot,
    lend,
    loan_actions,
    redis_client,
    thread_messages,
    worker,
    world,
)

__all__ = ["bot", "redis_client", "worker", "world"]  # fixtures, used by name


@pytest.fixture(scope="module")
def policy() -> dict[str, Any]:
    return {"min_loan": "1s", "loan_returns_need_approval": True}


def _waiting_return(bot: Any, request_id: str) -> Any:
    """The return request, once its message with the buttons is in the loan's thread."""
    loans = LoanStore(bot.redis)
    loan = until(lambda: (found := loans.get(request_id)) and found.return_request and found, 60)
    back = until(lambda: (r := bot.ctx.store.get(loan.return_request)) and r.message_ts and r, 60)
    message = next(m for m in thread_messages(bot, request_id) if m["ts"] == back.message_ts)
    assert buttons(message) == [
        ("join_approve", back.id),
        ("join_reject", back.id),
        ("join_cancel", back.id),
    ]
    return back


def _return_message(bot: Any, request_id: str, back_id: str, part: str) -> str | None:
    """The return request's own message (in the loan's thread), once it shows `part`."""
    ts = bot.request(back_id).message_ts
    shown = [text_of(m) for m in thread_messages(bot, request_id) if m["ts"] == ts]
    return shown[0] if shown and part in shown[0] else None


def test_the_return_waits_for_an_approver_then_brings_the_node_home(bot, world):
    request = lend(bot, "a-w-1 from clusterA to clusterB for 2s")
    back = _waiting_return(bot, request.id)
    replies = bot.wait_thread(request.id, lambda rs: any("The loan is up" in r for r in rs))
    assert any("the return waits for an approver" in r for r in replies)
    assert back.state is State.PENDING and back.decided_by == ""
    assert (back.source, back.target, back.requester) == ("clusterB", "clusterA", REQUESTER)
    assert world.cluster("clusterB").node("a-w-1") is not None  # nothing moves before approval

    _, own_rid = bot.approve(back.id, user=REQUESTER)
    assert "Only the configured approvers can approve" in bot.wait_answer(own_rid)
    bot.approve(back.id, user=APPROVER2)

    bot.wait_thread(request.id, lambda rs: any(r.startswith(":house:") for r in rs), 60)
    assert world.cluster("clusterA").node("a-w-1") is not None
    assert world.cluster("clusterB").node("a-w-1") is None
    assert bot.request(back.id).decided_by == APPROVER2
    shown = until(lambda: _return_message(bot, request.id, back.id, "Succeeded"), 10)
    assert f"Approved by <@{APPROVER2}>" in shown
    assert LoanStore(bot.redis).get(request.id).state is LoanState.RETURNED
    assert loan_actions(bot, request.id).count("returning") == 1


def test_a_rejected_return_leaves_the_loan_overdue(bot, world):
    request = lend(bot, "a-w-2 from clusterA to clusterB for 2s")
    back = _waiting_return(bot, request.id)
    bot.click("join_reject", back.id, APPROVER)

    loans = LoanStore(bot.redis)
    until(lambda: (loan := loans.get(request.id)) and loan.state is LoanState.OVERDUE, 60)
    replies = bot.wait_thread(request.id, lambda rs: any(":warning:" in r for r in rs), 60)
    assert any("The return was rejected; the node stays lent" in r for r in replies)
    assert world.cluster("clusterB").node("a-w-2") is not None
    _, rid = bot.slash("loans")
    assert f"`{request.id}` `a-w-2`: lent by clusterA to clusterB, overdue" in bot.wait_answer(rid)
