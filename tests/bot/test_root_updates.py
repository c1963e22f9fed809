"""The request's root message ends showing the newest state: a failed `chat.update` is tried
again, a stopped relay hands what it still wanted to the next one, and an older render that
lands late never stays over a newer one.

Times are scaled: one call's retry budget (bot/slack_retry.py, 120 s) is half a second here, the
refresher's pauses between tries are tenths of a second, and the render lock a second.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from bot import message, refresher, slack_retry
from bot.message import RequestMessages
from bot.relay import Relay
from joinops.requests.events import GLOBAL_STREAM, Event, EventKind, RedisEventLog
from joinops.requests.lifecycle import State
from tests.bot.harness import APPROVER, buttons, text_of


@pytest.fixture
def short_retries(bot, monkeypatch):  # type: ignore[no-untyped-def]
    """A call gives up on Slack's 5xx after half a second: an outage outlasts it."""
    monkeypatch.setattr(slack_retry, "FIRST_PAUSE", 0.02)
    monkeypatch.setattr(refresher, "BACKOFF_FIRST", 0.1)
    monkeypatch.setattr(refresher, "BACKOFF_LONGEST", 0.4)
    for handler in bot.ctx.client.retry_handlers:
        if isinstance(handler, slack_retry.TransientSlackErrors):
            handler.budget = 0.5
    return bot


def _running(bot):  # type: ignore[no-untyped-def]
    bot.slash("a-w-1 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    bot.approve(request.id, APPROVER)
    bot.wait_root(request.id, lambda t: f"Approved by <@{APPROVER}>" in t)
    assert bot.ctx.store.transition(request.id, State.RUNNING)[0]
    log = RedisEventLog(bot.redis)
    log.emit(Event(request.id, EventKind.STEP_STARTED, "checking", step="check"))
    bot.wait_root(request.id, lambda t: "Running: step 1/8" in t, timeout=30)
    assert bot.relay.idle(30)
    return request, log


def _finish(bot, request, log) -> None:  # type: ignore[no-untyped-def]
    assert bot.ctx.store.transition(request.id, State.SUCCEEDED)[0]
    log.emit(Event(request.id, EventKind.STATE, "a-w-1 is in clusterB", state="succeeded"))
    bot.wait_thread(request.id, lambda r: any(x.startswith(":tada:") for x in r), timeout=30)


def test_a_finished_migrations_root_is_right_after_a_chat_update_outage(short_retries):
    bot = short_retries
    request, log = _running(bot)
    outage = bot.sim.faults.add("chat.update", status=503, times=None)
    failed = bot.relay.refresher.failed
    _finish(bot, request, log)

    # Two whole updates gave up (each after its own retries): the outage outlasted them.
    bot.sim.wait_for(lambda: bot.relay.refresher.failed >= failed + 2, timeout=30)
    assert "Running: step 1/8" in text_of(bot.root(request.id))
    bot.sim.faults.clear()

    bot.wait_root(request.id, lambda t: "Succeeded" in t and "Running" not in t, timeout=30)
    assert outage.hits > 2


def test_a_relay_stopped_with_an_update_pending_renders_it_on_the_next_start(
    short_retries, monkeypatch
):
    bot = short_retries
    monkeypatch.setattr(refresher, "BACKOFF_FIRST", 60.0)  # it would wait long after its failure
    request, log = _running(bot)
    bot.sim.faults.add("chat.update", status=503, times=None)
    failed = bot.relay.refresher.failed
    _finish(bot, request, log)
    bot.sim.wait_for(lambda: bot.relay.refresher.failed > failed, timeout=30)

    group = bot.relay.group
    bot.relay.stop(timeout=0.5)
    bot.sim.faults.clear()
    assert bot.redis.xpending(GLOBAL_STREAM, group)["pending"] == 0  # every entry acknowledged
    assert "Running: step 1/8" in text_of(bot.root(request.id))

    bot.relay = Relay(bot.ctx, group=group, block_ms=100).start()  # the restarted bot's
    bot.wait_root(request.id, lambda t: "Succeeded" in t and "Running" not in t, timeout=30)


def _approvable(message: dict[str, Any]) -> bool:
    return any(action == "join_approve" for action, _ in buttons(message))


def test_an_older_render_landing_late_never_stays_over_a_newer_one(bot, monkeypatch):
    """Two renderers (a click's, another bot process's): the first renders the waiting request
    and its call is held in Slack longer than the render lock; meanwhile the request is approved
    and the second renders it approved. The older call lands last: the message still ends
    approved, without the buttons."""
    monkeypatch.setattr(message, "LOCK_SECONDS", 1)  # scaled: shorter than the held call
    bot.slash("a-w-1 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    assert bot.relay.idle(30)
    older = bot.sim.holds.add(
        "chat.update", lambda params: "join_approve" in json.dumps(params.get("blocks"))
    )
    first = threading.Thread(target=RequestMessages(bot.ctx).refresh, args=(request.id,))
    first.start()
    older.wait_arrived()

    now = bot.ctx.clock()
    assert bot.ctx.store.transition(
        request.id, State.APPROVED, decided_by=APPROVER, decided_at=now
    )[0]
    assert RequestMessages(bot.ctx).refresh(request.id)  # once the lock expired
    assert not _approvable(bot.root(request.id))
    updates = len(bot.sim.calls_to("chat.update"))
    older.release()
    first.join(30)

    # The older render landed over the newer one, and was followed by a fresh one.
    assert len(bot.sim.calls_to("chat.update")) == updates + 2
    root = bot.root(request.id)
    assert not _approvable(root) and "Approved" in text_of(root)


def test_a_cancel_whose_own_update_slack_refused_shows_once_slack_is_back(short_retries, caplog):
    """A running request cancelled with its button: no event follows until the worker has put
    the node back (none runs here), so the click's own update of the root is the only one —
    when Slack fails it past the call's retries, the relay's refresher takes it on and the root
    says "Cancelling" once Slack answers again, instead of "Running" for good."""
    bot = short_retries
    request, _ = _running(bot)
    outage = bot.sim.faults.add("chat.update", status=503, times=None)
    _, rid = bot.click("join_cancel", request.id, request.requester)
    assert bot.wait_answer(rid).startswith(f"Cancelling `{request.id}`")
    gave_up = f"request {request.id}: could not update its message"
    bot.sim.wait_for(lambda: any(gave_up in r.getMessage() for r in caplog.records), timeout=30)
    assert outage.hits >= 2  # the click's own update, tried again until its budget was spent
    assert "Running: step 1/8" in text_of(bot.root(request.id))
    bot.sim.faults.clear()

    bot.wait_root(request.id, lambda t: "Cancelling" in t and "Running" not in t, timeout=30)
