"""The relay: events become thread replies once, in order; Slack's failures never stop it."""

from __future__ import annotations

from joinops.requests.events import GLOBAL_STREAM, Event, EventKind, RedisEventLog
from joinops.requests.lifecycle import State
from joinops.requests.store import Request
from tests.bot.harness import APPROVER, text_of


def _running(bot):  # type: ignore[no-untyped-def]
    """A request approved in Slack whose job (played by the test) has started."""
    bot.slash("a-w-1 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    bot.approve(request.id, APPROVER)
    bot.wait_thread(request.id, lambda r: r)  # "Approved by…"
    assert bot.ctx.store.transition(request.id, State.RUNNING)[0]
    return request, RedisEventLog(bot.redis)


def _step(request_id: str, step: str, kind: EventKind = EventKind.STEP_STARTED) -> Event:
    return Event(request_id, kind, f"{step} says hello", step=step)


def test_a_redelivered_event_is_never_posted_twice(bot):
    request, log = _running(bot)
    log.emit(_step(request.id, "check"))
    log.emit(_step(request.id, "check", EventKind.STEP_SUCCEEDED))
    replies = bot.wait_thread(request.id, lambda r: len(r) == 3)

    # As if the relay had died before acknowledging: the group hands everything out again.
    bot.redis.xgroup_setid(GLOBAL_STREAM, bot.relay.group, id="0")
    log.emit(_step(request.id, "join-material"))
    after = bot.wait_thread(request.id, lambda r: len(r) >= 4)
    assert after[:3] == replies and len(after) == 4
    assert "Step 2/8 `join-material`" in after[3]


def test_a_rate_limited_post_is_retried_and_posted_once(bot):
    request, log = _running(bot)
    limited = bot.sim.faults.add("chat.postMessage", status=429, retry_after=1, times=2)
    log.emit(_step(request.id, "check"))
    replies = bot.wait_thread(request.id, lambda r: len(r) == 2, timeout=15)
    assert "Step 1/8 `check`" in replies[1]
    assert limited.hits == 2
    assert bot.request(request.id).state is State.RUNNING


def test_a_post_slack_may_have_made_is_not_made_again(bot):
    """A 500 to a post may come after Slack posted it: repeating it could post twice. The
    reply is given up (and logged); the relay goes on with the next."""
    request, log = _running(bot)
    posts = len(bot.sim.calls_to("chat.postMessage"))
    broken = bot.sim.faults.add("chat.postMessage", status=500)
    log.emit(_step(request.id, "check"))
    log.emit(_step(request.id, "check", EventKind.STEP_SUCCEEDED))
    replies = bot.wait_thread(request.id, lambda r: len(r) == 2)
    assert "`check` done" in replies[1] and broken.hits == 1
    assert len(bot.sim.calls_to("chat.postMessage")) == posts + 2  # one try each


def test_a_post_that_keeps_failing_is_dropped_and_the_relay_goes_on(bot):
    request, log = _running(bot)
    bot.sim.faults.add("chat.postMessage", error="channel_not_found", times=1)
    log.emit(_step(request.id, "check"))
    log.emit(_step(request.id, "check", EventKind.STEP_SUCCEEDED))
    replies = bot.wait_thread(request.id, lambda r: len(r) == 2)
    assert "`check` done" in replies[1]  # the start was lost, the relay went on
    assert bot.request(request.id).state is State.RUNNING


def test_progress_lines_update_the_status_line_not_the_thread(bot):
    request, log = _running(bot)
    log.emit(_step(request.id, "drain"))
    log.emit(Event(request.id, EventKind.PROGRESS, "40 of 100 pods gone", step="drain"))
    log.emit(Event(request.id, EventKind.PROGRESS, "90 of 100 pods gone", step="drain"))
    log.emit(_step(request.id, "drain", EventKind.STEP_SUCCEEDED))
    replies = bot.wait_thread(request.id, lambda r: len(r) == 3)
    assert not any("pods gone" in r for r in replies)
    root = bot.wait_root(request.id, lambda t: "Running: step 5/8 `drain`" in t)
    assert text_of(root).splitlines()[-1].startswith(":arrows_counterclockwise: Running")


def test_events_of_requests_made_elsewhere_are_skipped(bot):
    cli = bot.ctx.store.create(
        Request(id="", node="a-w-2", source="clusterA", target="clusterB", requester="cli:ops")
    )
    log = RedisEventLog(bot.redis)
    log.emit(_step(cli.id, "check"))
    request, _ = _running(bot)  # relayed after the skipped one: the relay did not stop
    log.emit(_step(request.id, "check"))
    bot.wait_thread(request.id, lambda r: len(r) == 2)
    assert len(bot.sim.calls_to("chat.postMessage")) == 3  # request, approval, step


def test_a_batch_nodes_events_change_its_table_in_place_not_its_thread(bot):
    bot.slash("a-w-1 a-w-2 from clusterA to clusterB")
    batch = bot.request_from_message(bot.wait_message(timeout=20))
    bot.approve(batch.id, APPROVER)
    bot.wait_thread(batch.id, lambda r: r)  # "Approved by…"
    log = RedisEventLog(bot.redis)
    kids = batch.extra["children"].split(",")
    for child in kids:  # their jobs (played by the test) have started
        assert bot.ctx.store.transition(child, State.RUNNING)[0]
    before = len(bot.sim.calls_to("chat.update"))
    for step in ("check", "join-material", "cordon", "drain"):
        for child in kids:
            log.emit(_step(child, step))
            log.emit(_step(child, step, EventKind.STEP_SUCCEEDED))
    for i in range(20):
        for child in kids:
            log.emit(Event(child, EventKind.PROGRESS, f"{i} of 20 pods gone", step="drain"))

    root = bot.wait_root(batch.id, lambda t: t.count("5/8 drain: 19 of 20 pods gone") == 2)
    assert "a-w-1" in text_of(root) and "a-w-2" in text_of(root)
    assert len(bot.wait_thread(batch.id, lambda r: r)) == 1  # no step of a node in the thread
    updates = len(bot.sim.calls_to("chat.update")) - before
    assert 1 <= updates <= 5  # 56 events, coalesced to about one update a second
