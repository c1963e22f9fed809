"""Loans end to end: `/join … for DURATION` → approval → a real `joinops worker` → the reminder →
the node moved back, all in the request's thread; Extend, Return now, and the bad cases.

One world and one worker serve the module (as tests/bot/test_flows.py): each test lends nodes of
its own; `policy.min_loan` is 1 s so that a loan of a few seconds comes back within the test.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from kubernetes import client

from joinops.loans.model import LoanState
from joinops.loans.store import LoanStore
from joinops.requests.audit import AuditLog
from joinops.requests.lifecycle import State
from kubesim import NodeSpec, World
from tests.bot.harness import (
    APPROVER,
    CHANNEL,
    REQUESTER,
    STRANGER,
    ack_text,
    buttons,
    text_of,
    until,
)
from tests.support.clusters import write_config
from tests.support.engine import start_worker, stop_worker

POLICY = {"min_loan": "1s"}
HOUR = 3600


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    with World(pod_grace_seconds=0.05, join_seconds=0.1) as w:
        w.add_cluster(
            "clusterA",
            version="v1.31.4",
            control_plane_endpoint="cp.a.test:6443",
            nodes=[
                NodeSpec("a-cp-1", role="control-plane"),
                *(NodeSpec(f"a-w-{i}") for i in range(1, 7)),
            ],
        )
        w.add_cluster(
            "clusterB",
            version="v1.31.4",
            control_plane_endpoint="cp.b.test:6443",
            nodes=[NodeSpec("b-cp-1", role="control-plane"), NodeSpec("b-w-1")],
        )
        yield w


@pytest.fixture(scope="module")
def shared_redis() -> Iterator[redis.Redis]:
    connection = redis.Redis.from_url(_redis_url())
    connection.flushdb()
    yield connection
    connection.flushdb()
    connection.close()


def _redis_url() -> str:
    return os.environ.get("JOINOPS_TEST_REDIS_URL", "redis://127.0.0.1:6379/9")  # as conftest


@pytest.fixture
def redis_client(shared_redis: redis.Redis) -> redis.Redis:
    return shared_redis  # not flushed per test: the module's worker keeps its keys


@pytest.fixture(scope="module")
def worker(world, shared_redis, tmp_path_factory):  # type: ignore[no-untyped-def]
    directory = tmp_path_factory.mktemp("worker")
    config = write_config(world, directory, policy=POLICY)
    process = start_worker(config, _redis_url(), directory / "worker.log")
    yield process
    stop_worker(process)


@pytest.fixture
def bot(make_bot, worker):  # type: ignore[no-untyped-def]
    return make_bot(policy=POLICY)


def _lend(bot: Any, words: str) -> Any:
    """Ask for a loan, approve it, and wait until the move succeeded and the loan runs."""
    bot.slash(words)
    request = bot.request_from_message(bot.wait_message())
    bot.approve(request.id)
    loans = LoanStore(bot.redis)
    until(lambda: (loan := loans.get(request.id)) and loan.state is LoanState.ACTIVE, 60)
    bot.wait_thread(request.id, lambda replies: any(":hourglass" in r for r in replies))
    return request


def _thread_messages(bot: Any, request_id: str) -> list[dict[str, Any]]:
    return bot.sim.thread(CHANNEL, bot.request(request_id).message_ts)


def _loan_actions(bot: Any, request_id: str) -> list[str]:
    return [
        str(e.action)
        for e in AuditLog(bot.redis).entries()
        if e.request_id == request_id and e.actor in ("joinops", REQUESTER, APPROVER)
    ]


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
        m for m in _thread_messages(bot, request.id) if text_of(m).startswith(":alarm_clock:")
    )
    assert [a for a, _ in buttons(reminder_message)] == ["loan_extend", "loan_return"]
    assert {v for _, v in buttons(reminder_message)} == {request.id}
    assert "Extend 4h" in str(reminder_message["blocks"])

    assert world.cluster("clusterA").node("a-w-1") is not None
    assert world.cluster("clusterB").node("a-w-1") is None
    loan = LoanStore(bot.redis).get(request.id)
    assert loan is not None and loan.state is LoanState.RETURNED
    back = bot.request(loan.return_request)
    assert back.state is State.SUCCEEDED and (back.source, back.target) == ("clusterB", "clusterA")
    assert back.decided_by == APPROVER
    actions = _loan_actions(bot, request.id)
    for action in ("lent", "reminded", "returning", "returned"):
        assert actions.count(action) == 1, actions


def test_extend_moves_the_return_back_and_return_now_brings_the_node_home(bot, world):
    request = _lend(bot, "a-w-2 from clusterA to clusterB for 1h")
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


def test_someone_else_may_not_press_the_loan_buttons(bot):
    request = _lend(bot, "a-w-3 from clusterA to clusterB for 1h")
    _, rid = bot.click("loan_extend", request.id, STRANGER)
    answer = bot.wait_answer(rid)
    assert f"Only <@{REQUESTER}>, who asked for the loan, or an approver" in answer
    loan = LoanStore(bot.redis).get(request.id)
    assert loan is not None and loan.generation == 1  # not extended
    denied = [e for e in AuditLog(bot.redis).entries() if e.actor == STRANGER]
    assert [str(e.action) for e in denied] == ["denied"]


def test_a_node_moved_elsewhere_by_hand_closes_the_loan(bot, world):
    request = _lend(bot, "a-w-4 from clusterA to clusterB for 1h")
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
    assert "loan-closed" in _loan_actions(bot, request.id)


def test_a_return_the_rules_refuse_is_not_attempted_and_the_loan_is_overdue(bot, world):
    request = _lend(bot, "a-w-5 from clusterA to clusterB for 1h")
    world.cluster("clusterA").add_node(NodeSpec("a-w-5"))  # the name is taken back home

    bot.click("loan_return", request.id, REQUESTER)
    replies = bot.wait_thread(request.id, lambda rs: any(":warning:" in r for r in rs))
    overdue = next(r for r in replies if r.startswith(":warning: The loan of `a-w-5` is overdue"))
    assert "press Return now again" in overdue
    loan = LoanStore(bot.redis).get(request.id)
    assert loan is not None and loan.state is LoanState.OVERDUE
    assert bot.ctx.store.get(loan.return_request) is None
    overdue_message = next(
        m for m in _thread_messages(bot, request.id) if text_of(m).startswith(":warning:")
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


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("a-w-6 from clusterA to clusterB for 8x", "'8x' is not a loan duration"),
        ("a-w-6 from clusterA to clusterB for", "Usage: `/join NODE from SOURCE to TARGET"),
        ("a-w-6 from clusterA to clusterB for 31d", "A loan of 31 days is not allowed"),
        ("a-w-6 b-w-1 to clusterA for 0s", "'0s' is not a loan duration"),
    ],
)
def test_a_loan_duration_that_is_not_allowed_gets_the_range(make_bot, words, expected):
    bot = make_bot()  # the default policy: 10 min to 30 days
    delivery, _ = bot.slash(words)
    answer = ack_text(delivery)
    assert expected in answer
    if "Usage" not in expected:
        assert "a loan lasts from 10 min to 30 days" in answer
    assert bot.messages() == [] and bot.jobs() == []


def test_a_loan_shorter_than_the_policy_allows_is_refused(make_bot):
    bot = make_bot()
    delivery, _ = bot.slash("a-w-6 from clusterA to clusterB for 5m")
    assert "A loan of 5 min is not allowed: a loan lasts from 10 min to 30 days." in ack_text(
        delivery
    )
