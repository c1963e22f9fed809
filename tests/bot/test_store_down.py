"""Redis unreachable: the bot says it cannot take requests and takes nothing it could lose.

The bot runs on a private `redis-server` that each test stops: before a command, while a
command's cluster check runs, and between the request message being posted and the request being
recorded. Every time: a clear ephemeral answer, no request message left that could be approved,
no half-written request once Redis is back; `/join help` still answers; `/healthz` says 503.
"""

from __future__ import annotations

import logging
import os
import signal
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
import redis

from bot.message import RequestMessages
from bot.texts import access as access_texts
from joinops.requests.events import Event, EventKind, RedisEventLog
from joinops.requests.lifecycle import State
from joinops.requests.store import ACTIVE, PREFIX, Request, RequestStore
from slacksim.signing import Delivery, block_actions_body, deliver
from tests.bot.harness import (
    APPROVER,
    CHANNEL,
    SECRET,
    SLACK_ACK_DEADLINE,
    ack_text,
    buttons,
    text_of,
    until,
)
from tests.support.faults import HeldCall, RedisServer

ASK = "a-w-1 from clusterA to clusterB"
CANNOT = (
    "I cannot take requests right now (the queue/state store is unreachable); nothing was "
    "recorded — try again in a minute."
)


@pytest.fixture
def redis_server(tmp_path) -> Iterator[RedisServer]:  # type: ignore[no-untyped-def]
    directory = tmp_path / "redis"
    directory.mkdir()
    server = RedisServer(directory)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    return redis_server.url


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


def _health(bot) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    try:
        with urllib.request.urlopen(bot.server.url + "/healthz", timeout=5) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _approve(bot, request: Request) -> tuple[Delivery, str]:  # type: ignore[no-untyped-def]
    url = bot.sim.response_url("down-click", channel=CHANNEL, user=APPROVER)
    body = block_actions_body(
        action_id="join_approve",
        value=request.id,
        user_id=APPROVER,
        message_ts=request.message_ts,
        response_url=url,
    )
    return deliver(bot.events_url, body, SECRET), "down-click"


def _requests(client: redis.Redis) -> list[bytes]:
    return sorted(client.scan_iter(match=PREFIX + "*")) + sorted(client.smembers(ACTIVE))


@pytest.fixture
def tracebacks() -> Iterator[list[logging.LogRecord]]:
    """Records logged at ERROR or with a traceback: an outage is not a bug. (Not RQ's own: the
    check worker that stands in for `joinops worker` quits, logging why, when Redis goes.)"""
    found: list[logging.LogRecord] = []

    def keep(record: logging.LogRecord) -> None:
        if (record.levelno >= logging.ERROR or record.exc_info) and not record.name.startswith(
            "rq."
        ):
            found.append(record)

    handler = logging.Handler(logging.DEBUG)
    handler.emit = keep  # type: ignore[method-assign]
    logging.getLogger().addHandler(handler)
    yield found
    logging.getLogger().removeHandler(handler)


def test_with_redis_down_commands_and_clicks_are_refused_and_nothing_is_taken(
    make_bot, redis_server, redis_client, tracebacks
):
    assert access_texts.store_unreachable() == CANNOT
    bot = make_bot()
    bot.slash(ASK)
    request = bot.request_from_message(bot.wait_message())
    assert _health(bot) == (200, "ok")
    before = _requests(redis_client)
    posted = len(bot.sim.calls_to("chat.postMessage"))

    redis_server.shutdown()
    until(bot.store_watch.problem, 5)  # the acks read what the watch's PINGs last found
    delivery, rid = bot.slash("a-w-2 from clusterA to clusterB")
    # Redis is gone, nothing to hold against: the refusal is the ack, within Slack's deadline
    assert delivery.status == 200 and delivery.elapsed < SLACK_ACK_DEADLINE
    assert delivery.json()["response_type"] == "ephemeral"
    assert ack_text(delivery) == CANNOT
    for text in ("list", "status", f"cancel {request.id}", "clusters"):
        assert ack_text(bot.slash(text)[0]) == CANNOT, text
    assert "moves Kubernetes nodes" in ack_text(bot.slash("help")[0])

    clicked, click_rid = _approve(bot, request)  # harness.approve would read Redis itself
    assert clicked.status == 200 and clicked.elapsed < SLACK_ACK_DEADLINE
    assert bot.wait_answer(click_rid) == CANNOT
    status, body = _health(bot)
    assert status == 503 and body.startswith("redis unreachable")

    redis_server.start()
    until(lambda: bot.store_watch.problem() is None, 5)
    assert _requests(redis_client) == before  # nothing was written, nothing half-written
    assert bot.request(request.id).state is State.PENDING and bot.jobs() == []
    assert len(bot.sim.calls_to("chat.postMessage")) == posted
    assert bot.sim.responses(rid) == []  # no late "Checking…" work ran
    assert _health(bot) == (200, "ok")
    # and the bot takes requests again, on the same connections
    bot.approve(request.id, APPROVER)
    bot.wait_root(request.id, lambda t: f"Approved by <@{APPROVER}>" in t)
    # the relay is back too: an event of the request's (played by the test) reaches its thread
    RedisEventLog(bot.redis).emit(Event(request.id, EventKind.STEP_STARTED, "check", step="check"))
    bot.wait_thread(request.id, lambda r: r)
    assert [r.getMessage() for r in tracebacks] == []


def test_redis_lost_during_the_cluster_check_posts_nothing(make_bot, world, redis_server):
    bot = make_bot()
    node_read = HeldCall(world.cluster("clusterA"), "/api/v1/nodes/a-w-1", "GET", seconds=1.0)
    delivery, rid = bot.slash(ASK)
    assert "Checking" in ack_text(delivery)  # Redis answered at the ack
    node_read.wait_held()  # the cluster check is under way, on a worker
    redis_server.shutdown()
    # the check's answer comes back through Redis: the bot meets the outage waiting for it
    answer = bot.wait_answer(rid, timeout=15)
    assert answer.startswith("The queue/state store stopped answering while I handled this")
    redis_server.start()
    assert bot.sim.calls_to("chat.postMessage") == []
    assert bot.ctx.store.recent(10) == []


def test_redis_lost_between_posting_and_recording_withdraws_the_message(
    make_bot, redis_server, redis_client, monkeypatch
):
    bot = make_bot()
    post = RequestMessages.post_request

    def post_then_lose_redis(self, request):  # type: ignore[no-untyped-def]
        ts = post(self, request)
        redis_server.shutdown()
        return ts

    monkeypatch.setattr(RequestMessages, "post_request", post_then_lose_redis)
    _, rid = bot.slash(ASK)
    assert bot.wait_answer(rid, timeout=15) == CANNOT

    message = bot.wait_message()
    assert buttons(message) == []  # nobody can approve what was never recorded
    assert text_of(message).startswith("Not recorded: moving `a-w-1` from clusterA to clusterB")
    redis_server.start()
    assert _requests(redis_client) == []


def test_redis_lost_in_the_middle_of_a_command_is_said_plainly(
    make_bot, redis_server, monkeypatch, tracebacks
):
    bot = make_bot()
    recent = RequestStore.recent

    def lose_redis_then_read(self, count=20):  # type: ignore[no-untyped-def]
        redis_server.shutdown()
        return recent(self, count)

    monkeypatch.setattr(RequestStore, "recent", lose_redis_then_read)
    delivery, rid = bot.slash("status")
    assert delivery.status == 200  # Redis answered at the ack
    answer = bot.wait_answer(rid, timeout=15)
    assert answer.startswith("The queue/state store stopped answering while I handled this")
    redis_server.start()
    assert [r.getMessage() for r in tracebacks] == []


def test_a_hung_redis_never_holds_up_an_ack(make_bot, redis_server):
    bot = make_bot()
    assert redis_server.process is not None
    os.kill(redis_server.process.pid, signal.SIGSTOP)  # Redis accepts, and answers nothing
    try:
        # Redis answers nothing until SIGCONT: an ack that asked it would never come (Slack
        # would give up, and `deliver` with it). Both acks came: they asked Redis nothing.
        delivery, _ = bot.slash(ASK)
        assert delivery.status == 200 and "Checking" in ack_text(delivery)
        until(bot.store_watch.problem, 10)  # the watch's PING timed out meanwhile
        refused, _ = bot.slash("a-w-2 from clusterA to clusterB")
        assert refused.status == 200 and ack_text(refused) == CANNOT
    finally:
        os.kill(redis_server.process.pid, signal.SIGCONT)
    # the first command's work waited for Redis: once it answers, the request is made
    assert bot.request_from_message(bot.wait_message(timeout=30)).node == "a-w-1"
