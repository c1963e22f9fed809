"""Loans end to end: `/join … for DURATION` → approval → a real `joinops worker` → the reminder →
the node moved back, all in the request's thread; Extend, Return now, and the bad cases.

One world and one worker serve the module (as tests/bot/test_flows.py): each test lends nodes of
its own; `policy.min_loan` is 1 s so that a loan of a few seconds comes back within the test.
"""

from __future__ import annotations

import math

import pytest
from kubernetes import client
from rq.job import Job

from joinops.loans.model import LoanState
from joinops.loans.store import LoanStore
from joinops.queue import queue
from joinops.requests.audit import AuditLog
from joinops.requests.lifecycle import State
from kubesim import NodeSpec
from tests.bot.harness import APPROVER, REQUESTER, STRANGER, ack_text, buttons, text_of, until
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

HOUR = 3600


@pytest.fixture(scope="module")
def policy() -> dict[str, str]:
    return {"min_loan": "1s"}


def test_a_loan_of_seconds_is_reminded_then_moved_back_in_the_same_thread(bot, world):
    bot.slash("a-w-1 from clusterA to clusterB for 4s")
    message = bot.wait_message()
    request = bot.request_from_message(message)
    assert "*Loan*\n4 s, then back to clusterA" in text_of(message)
    bot.approve(request.id)

    replies = bot.wait_thread(request.id, lambda rs: any(r.startswith(":house:") for r in rs), 90)

    tada = [i for i, r in enumerate(replies) if r.startswith(":tada:")]
    lent = next(i for i, r in enumerate(replies) if r.startswith(":hourglass_flowing_sand:"))
    reminder = next(i for i, r in enumerate(replies) if r.startswith(":alarm_clock:"))
    returning = next(i for i, r in enumerate(replies) if "The loan is up" in r)
    assert len(tada) == 2, replies  # both moves end in this thread
    assert tada[0] < lent < reminder < returning < tada[1] < len(replies) - 1
    assert "moved from clusterA to clusterB" in replies[tada[0]]
    assert "moved from clusterB to clusterA" in replies[tada[1]]
    assert f"under <@{APPROVER}>'s approval of the loan" in replies[returning]
    assert "A reminder comes here 1 s before" in replies[lent]
    assert replies[-1] == ":house: `a-w-1` is back in clusterA; the loan is closed."

    reminder_message = next(
        m for m in thread_messages(bot, request.id) if text_of(m).startswith(":alarm_clock:")
    )
    assert buttons(reminder_message) == []  # the return has started: nothing left to press

    assert world.cluster("clusterA").node("a-w-1") is not None
    assert world.cluster("clusterB").node("a-w-1") is None
    loan = LoanStore(bot.redis).get(request.id)
    assert loan is not None and loan.state is LoanState.RETURNED
    back = bot.request(loan.return_request)
    assert back.state is State.SUCCEEDED and (back.source, back.target) == ("clusterB", "clusterA")
    assert back.decided_by == APPROVER
    actions = loan_actions(bot, request.id)
    for action in ("lent", "reminded", "returning", "returned"):
        assert actions.count(action) == 1, actions
    when = {
        str(e.action): e.at for e in AuditLog(bot.redis).entries() if e.request_id == request.id
    }  # a quarter of 4 s: reminded 1 s before the return, not earlier
    assert loan.remind_at == pytest.approx(loan.due_at - 1)
    assert loan.remind_at <= when["reminded"] <= when["returning"]
    assert loan.due_at <= when["returning"]  # RQ's scheduler runs in whole seconds: no sooner


def test_the_reminder_of_a_long_loan_is_scheduled_30_minutes_before_its_return(bot):
    request = lend(bot, "a-w-12 from clusterA to clusterB for 8h")
    loan = LoanStore(bot.redis).get(request.id)
    assert loan is not None and loan.due_at - loan.lent_at == pytest.approx(8 * HOUR)
    scheduled = queue(bot.redis).scheduled_job_registry

    def at(what: str) -> float:
        job = Job.fetch(f"loan-{request.id}-{what}-1", connection=bot.redis)
        return scheduled.get_scheduled_time(job).timestamp()

    assert at("return") == math.ceil(loan.due_at)
    assert at("remind") == math.ceil(loan.due_at - 30 * 60)
    replies = bot.thread(request.id)
    assert any("A reminder comes here 30 min before" in r for r in replies), replies


def test_each_node_of_a_batch_is_lent_and_returned_in_the_batch_thread(bot, world):
    bot.slash("a-w-7 a-w-8 to clusterB for 3s")
    message = bot.wait_message()
    batch = bot.request_from_message(message)
    assert "*Loan*\n3 s, then back to the cluster each node came from" in text_of(message)
    bot.approve(batch.id)

    def both_home(replies: list[str]) -> bool:
        return sum(r.startswith(":house:") for r in replies) == 2

    replies = bot.wait_thread(batch.id, both_home, 90)
    for node in ("a-w-7", "a-w-8"):
        assert any(r.startswith(f":house: `{node}` is back in clusterA") for r in replies)
        assert any("moved from clusterB to clusterA" in r and f"`{node}`" in r for r in replies)
        assert world.cluster("clusterA").node(node) is not None
        assert world.cluster("clusterB").node(node) is None


def test_the_reminder_s_buttons_extend_the_loan_then_bring_the_node_home(bot, world):
    request = lend(bot, "a-w-9 from clusterA to clusterB for 40s")  # reminded 10 s before
    loans = LoanStore(bot.redis)
    noted = until(lambda: (loan := loans.get(request.id)) and loan.reminder_ts, 60)

    def reminder() -> dict:
        return next(m for m in thread_messages(bot, request.id) if m["ts"] == noted)

    message = reminder()
    assert text_of(message).startswith(":alarm_clock:")
    assert dict(buttons(message)) == {
        "loan_extend": f"{request.id}:1",
        "loan_return": f"{request.id}:1",
    }
    assert "Extend 4h" in str(message["blocks"]) and "Return now" in str(message["blocks"])
    extend = dict(buttons(message))["loan_extend"]
    bot.click("loan_extend", request.id, REQUESTER, value=extend)
    extended = until(lambda: (loan := loans.get(request.id)) and loan.generation == 2 and loan, 10)
    assert extended.due_at - extended.lent_at == pytest.approx(40 + 4 * HOUR)
    pressed = bot.sim.wait_for(lambda: ":fast_forward:" in text_of(reminder()) and reminder())
    assert dict(buttons(pressed)) == {
        "loan_extend": f"{request.id}:2",
        "loan_return": f"{request.id}:2",
    }  # still lent: both buttons stay, for the new due time
    assert bot.redis.exists(f"rq:job:loan-{request.id}-return-1") == 0  # the old one is gone

    bot.click("loan_return", request.id, REQUESTER, value=f"{request.id}:2")
    bot.wait_thread(request.id, lambda rs: any(r.startswith(":house:") for r in rs), 60)
    assert buttons(reminder()) == []  # returned: nothing left to press
    assert world.cluster("clusterA").node("a-w-9") is not None


def test_a_loan_outlives_the_bot_that_lent_it(bot, make_bot, world, policy):
    request = lend(bot, "a-w-10 from clusterA to clusterB for 5s")
    bot.stop()  # the bot goes away while the node is lent; another one takes over
    restarted = make_bot(policy=policy)
    restarted.wait_thread(request.id, lambda rs: any(r.startswith(":house:") for r in rs), 60)
    assert world.cluster("clusterA").node("a-w-10") is not None
    assert world.cluster("clusterB").node("a-w-10") is None


def test_extend_moves_the_return_back_and_return_now_brings_the_node_home(bot, world):
    request = lend(bot, "a-w-2 from clusterA to clusterB for 1h")
    loans = LoanStore(bot.redis)
    before = loans.get(request.id)
    assert before is not None

    bot.click("loan_extend", request.id, REQUESTER)
    extended = until(
        lambda: (loan := loans.get(request.id)) and loan.due_at > before.due_at and loan, 10
    )
    assert extended.due_at == pytest.approx(before.due_at + 4 * HOUR)
    bot.wait_thread(
        request.id, lambda rs: any("extended the loan of `a-w-2` by 4 h" in r for r in rs)
    )
    assert extended.state is LoanState.ACTIVE

    _, status_rid = bot.slash(f"status {request.id}")
    assert "*Loan*: active, back to clusterA at <!date^" in bot.wait_answer(status_rid)
    _, listed_rid = bot.slash("loans")
    listed = bot.wait_answer(listed_rid)
    assert f"`{request.id}` `a-w-2`: lent by clusterA to clusterB, active" in listed

    bot.click("loan_return", request.id, APPROVER)
    replies = bot.wait_thread(request.id, lambda rs: any(r.startswith(":house:") for r in rs), 60)
    assert any(f"<@{APPROVER}> asked for `a-w-2` back" in r for r in replies)
    assert world.cluster("clusterA").node("a-w-2") is not None
    assert world.cluster("clusterB").node("a-w-2") is None
    assert loans.get(request.id).state is LoanState.RETURNED

    _, again_rid = bot.slash("loans")
    assert request.id not in bot.wait_answer(again_rid)
    _, late_rid = bot.click("loan_return", request.id, REQUESTER)
    assert "This loan is returned" in bot.wait_answer(late_rid)


def test_a_double_click_on_extend_extends_once(bot):
    request = lend(bot, "a-w-6 from clusterA to clusterB for 1h")
    loans = LoanStore(bot.redis)
    before = loans.get(request.id)
    assert before is not None
    shown = f"{request.id}:{before.generation}"  # the value of the buttons the user saw
    _, first = bot.click("loan_extend", request.id, REQUESTER, value=shown)
    _, second = bot.click("loan_extend", request.id, REQUESTER, value=shown)
    assert "Nothing changed: the loan changed since that message" in bot.wait_answer(second)
    assert bot.answers(first) == []
    after = loans.get(request.id)
    assert after is not None and after.due_at == pytest.approx(before.due_at + 4 * HOUR)
    # the first click's audit entry follows its change of the loan: waited for, then counted
    until(lambda: "extended" in loan_actions(bot, request.id), 30)
    assert loan_actions(bot, request.id).count("extended") == 1


def test_someone_else_may_not_press_the_loan_buttons(bot):
    request = lend(bot, "a-w-3 from clusterA to clusterB for 1h")
    _, rid = bot.click("loan_extend", request.id, STRANGER)
    answer = bot.wait_answer(rid)
    assert f"Only <@{REQUESTER}>, who asked for the loan, or an approver" in answer
    loan = LoanStore(bot.redis).get(request.id)
    assert loan is not None and loan.generation == 1  # not extended
    denied = [e for e in AuditLog(bot.redis).entries() if e.actor == STRANGER]
    assert [str(e.action) for e in denied] == ["denied"]


def test_a_node_moved_elsewhere_by_hand_closes_the_loan(bot, world):
    request = lend(bot, "a-w-4 from clusterA to clusterB for 1h")
    b = world.cluster("clusterB")
    api = client.CoreV1Api(b.api_client())
    api.delete_node("a-w-4")
    api.api_client.close()

    bot.click("loan_return", request.id, REQUESTER)
    replies = bot.wait_thread(request.id, lambda rs: any("no longer in clusterB" in r for r in rs))
    assert any("the loan is closed" in r for r in replies)
    loan = LoanStore(bot.redis).get(request.id)
    assert loan is not None and loan.state is LoanState.CLOSED and loan.return_request
    assert bot.ctx.store.get(loan.return_request) is None  # no move was attempted
    assert "loan-closed" in loan_actions(bot, request.id)


def test_a_return_the_rules_refuse_is_not_attempted_and_the_loan_is_overdue(bot, world):
    request = lend(bot, "a-w-5 from clusterA to clusterB for 1h")
    world.cluster("clusterA").add_node(NodeSpec("a-w-5"))  # the name is taken back home

    bot.click("loan_return", request.id, REQUESTER)
    replies = bot.wait_thread(request.id, lambda rs: any(":warning:" in r for r in rs))
    overdue = next(r for r in replies if r.startswith(":warning: The loan of `a-w-5` is overdue"))
    assert "press Return now again" in overdue
    loan = LoanStore(bot.redis).get(request.id)
    assert loan is not None and loan.state is LoanState.OVERDUE
    assert bot.ctx.store.get(loan.return_request) is None
    overdue_message = next(
        m for m in thread_messages(bot, request.id) if text_of(m).startswith(":warning:")
    )
    assert [a for a, _ in buttons(overdue_message)] == ["loan_return"]

    _, rid = bot.slash("loans")
    assert f"`{request.id}` `a-w-5`: lent by clusterA to clusterB, overdue" in bot.wait_answer(rid)

    api = client.CoreV1Api(world.cluster("clusterA").api_client())
    api.delete_node("a-w-5")  # the clash is resolved: Return now again brings it home
    api.api_client.close()
    bot.click("loan_return", request.id, REQUESTER)
    bot.wait_thread(request.id, lambda rs: any(r.startswith(":house:") for r in rs), 60)
    assert LoanStore(bot.redis).get(request.id).state is LoanState.RETURNED
    loan_events = ("lent", "return-asked", "overdue", "returning", "returned")
    actions = [a for a in loan_actions(bot, request.id) if a in loan_events]  # the audit trail
    assert actions == [
        "lent",
        "return-asked",
        "overdue",
        "return-asked",
        "returning",
        "returned",
    ], [
        (e.action, e.actor, e.detail)
        for e in AuditLog(bot.redis).entries()
        if e.request_id == request.id
    ]


def test_a_return_a_version_no_longer_allows_is_not_attempted(bot, world):
    request = lend(bot, "a-w-11 from clusterA to clusterB for 1h")
    home = world.cluster("clusterA")
    was = home.version
    home.version = "v1.33.1"  # clusterA was upgraded while its node was away
    try:
        bot.click("loan_return", request.id, REQUESTER)
        replies = bot.wait_thread(request.id, lambda rs: any(":warning:" in r for r in rs))
    finally:
        home.version = was
    overdue = next(r for r in replies if r.startswith(":warning: The loan of `a-w-11` is overdue"))
    assert "v1.31.4" in overdue and "v1.33" in overdue
    loan = LoanStore(bot.redis).get(request.id)
    assert loan is not None and loan.state is LoanState.OVERDUE
    assert bot.ctx.store.get(loan.return_request) is None  # not attempted
    assert world.cluster("clusterB").node("a-w-11") is not None


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("a-w-8 from clusterA to clusterB for 8x", "'8x' is not a loan duration"),
        ("a-w-8 from clusterA to clusterB for", "Usage: `/join NODE from SOURCE to TARGET"),
        ("a-w-8 from clusterA to clusterB for 31d", "A loan of 31 days is not allowed"),
        ("a-w-8 b-w-1 to clusterA for 0s", "'0s' is not a loan duration"),
        ("all from clusterA to clusterB for 1y force", "'1y' is not a loan duration"),
    ],
)
def test_a_loan_duration_that_is_not_allowed_gets_the_range(make_bot, words, expected):
    bot = make_bot()  # the default policy: 10 min to 30 days
    queued = bot.jobs()  # the module's Redis is shared: what earlier tests queued stays theirs
    delivery, _ = bot.slash(words)
    answer = ack_text(delivery)
    assert expected in answer
    if "Usage" not in expected:
        assert "a loan lasts from 10 min to 30 days" in answer
    assert bot.messages() == [] and bot.jobs() == queued  # this command queued nothing


def test_a_loan_shorter_than_the_policy_allows_is_refused(make_bot):
    bot = make_bot()
    delivery, _ = bot.slash("a-w-8 from clusterA to clusterB for 5m")
    assert "A loan of 5 min is not allowed: a loan lasts from 10 min to 30 days." in ack_text(
        delivery
    )
