"""The relay: events become thread replies once, in order; Slack's failures never stop it.

A step has one reply, posted when it starts and edited as it goes on (bot/step_replies.py)."""

from __future__ import annotations

import time

from bot.relay import Relay
from joinops.requests.events import GLOBAL_STREAM, Event, EventKind, RedisEventLog
from joinops.requests.lifecycle import State
from joinops.requests.steprecords import Outcome
from joinops.requests.store import Request
from tests.bot.harness import APPROVER, CHANNEL, REQUESTER, text_of


def _running(bot):  # type: ignore[no-untyped-def]
    """A request approved in Slack whose job (played by the test) has started."""
    bot.slash("a-w-1 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    bot.approve(request.id, APPROVER)
    bot.wait_root(request.id, lambda t: f"Approved by <@{APPROVER}>" in t)
    assert bot.ctx.store.transition(request.id, State.RUNNING)[0]
    return request, RedisEventLog(bot.redis)


def _step(request_id: str, step: str, kind: EventKind = EventKind.STEP_STARTED) -> Event:
    return Event(request_id, kind, f"{step} says hello", step=step)


def test_an_approval_adds_no_reply_the_root_says_who_approved(bot):
    request, log = _running(bot)
    log.emit(_step(request.id, "check"))
    replies = bot.wait_thread(request.id, lambda r: r)
    assert replies == [":arrow_forward: Step 1/8 `check` running: check says hello"]


def test_a_step_has_one_reply_edited_from_running_to_done(bot):
    request, log = _running(bot)
    log.emit(_step(request.id, "check"))
    bot.wait_thread(request.id, lambda r: r)
    log.emit(_step(request.id, "check", EventKind.STEP_RETRYING))
    log.emit(Event(request.id, EventKind.STEP_SUCCEEDED, "rules pass", step="check", seconds=2.2))
    replies = bot.wait_thread(request.id, lambda r: r and "done" in r[0])
    assert replies == [":white_check_mark: Step 1/8 `check` done (2.2 s): rules pass"]
    edits = [c for c in bot.sim.calls_to("chat.update") if c.params["ts"] != request.message_ts]
    assert (
        edits[0].params["text"] == ":repeat: Step 1/8 `check`: check says hello"
    )  # the retry, in place
    assert bot.sim.notifications(CHANNEL, request.message_ts) == 1  # edits notify nobody


def test_a_redelivered_event_is_never_posted_twice(bot):
    request, log = _running(bot)
    log.emit(_step(request.id, "check"))
    log.emit(_step(request.id, "check", EventKind.STEP_SUCCEEDED))
    replies = bot.wait_thread(request.id, lambda r: r and "done" in r[0])

    # As if the relay had died before acknowledging: the group hands everything out again.
    bot.redis.xgroup_setid(GLOBAL_STREAM, bot.relay.group, id="0")
    log.emit(_step(request.id, "join-material"))
    after = bot.wait_thread(request.id, lambda r: len(r) >= 2)
    assert after[:1] == replies and len(after) == 2
    assert "Step 2/8 `join-material` running" in after[1]


def test_a_relay_restarted_inside_a_step_edits_the_reply_it_posted(bot):
    """The step's reply is known by its ts in Redis: the next relay (a new process would read the
    same) edits it rather than posting a second one."""
    request, log = _running(bot)
    log.emit(_step(request.id, "drain"))
    bot.wait_thread(request.id, lambda r: r)
    first = bot.relay
    assert first.idle(30)
    first.stop()
    bot.relay = Relay(bot.ctx, group=first.group, consumer=first.consumer, block_ms=100).start()
    posts = len(bot.sim.calls_to("chat.postMessage"))

    log.emit(_step(request.id, "drain", EventKind.STEP_SUCCEEDED))
    replies = bot.wait_thread(request.id, lambda r: r and "done" in r[0])
    assert replies == [":white_check_mark: Step 5/8 `drain` done: drain says hello"]
    assert len(bot.sim.calls_to("chat.postMessage")) == posts  # edited, not posted again


def test_a_rate_limited_post_is_retried_and_posted_once(bot):
    request, log = _running(bot)
    limited = bot.sim.faults.add("chat.postMessage", status=429, retry_after=1, times=2)
    log.emit(_step(request.id, "check"))
    replies = bot.wait_thread(request.id, lambda r: r, timeout=15)
    assert replies == [":arrow_forward: Step 1/8 `check` running: check says hello"]
    assert limited.hits == 2
    assert bot.request(request.id).state is State.RUNNING


def test_a_post_answered_with_a_5xx_is_looked_for_and_posted_again_if_missing(bot):
    """A 500 to a post may come after Slack posted it: the relay looks in the thread
    (conversations.replies) before posting anything else. Here Slack had not posted it: it is
    posted again, once, and the thread goes on."""
    request, log = _running(bot)
    posts = len(bot.sim.calls_to("chat.postMessage"))
    broken = bot.sim.faults.add("chat.postMessage", status=500)
    log.emit(_step(request.id, "check"))
    log.emit(_step(request.id, "check", EventKind.STEP_SUCCEEDED))
    replies = bot.wait_thread(request.id, lambda r: r and "done" in r[0])
    assert replies == [":white_check_mark: Step 1/8 `check` done: check says hello"]
    assert broken.hits == 1 and len(bot.sim.calls_to("conversations.replies")) == 1
    assert len(bot.sim.calls_to("chat.postMessage")) == posts + 2  # the 500, and again


def test_a_step_whose_start_was_lost_still_gets_its_outcome_as_a_reply(bot):
    request, log = _running(bot)
    bot.sim.faults.add("chat.postMessage", error="channel_not_found", times=1)
    log.emit(_step(request.id, "check"))
    log.emit(_step(request.id, "check", EventKind.STEP_FAILED))
    replies = bot.wait_thread(request.id, lambda r: r)
    assert replies == [":x: Step 1/8 `check` failed: check says hello"]  # never lost
    assert bot.request(request.id).state is State.RUNNING


def test_a_cancelled_requests_running_step_says_it_stopped(bot):
    request, log = _running(bot)
    log.emit(_step(request.id, "drain"))
    bot.wait_thread(request.id, lambda r: r)
    bot.ctx.store.transition(request.id, State.CANCELLED, outcome="Cancelled before the agent.")
    log.emit(Event(request.id, EventKind.STATE, "Cancelled before the agent.", state="cancelled"))
    replies = bot.wait_thread(request.id, lambda r: len(r) == 2)
    assert (
        replies[0]
        == ":black_square_for_stop: Step 5/8 `drain` stopped: the request ended (cancelled)."
    )
    assert replies[1].startswith(f":white_circle: <@{REQUESTER}> Cancelled before the agent.")


def test_progress_lines_update_the_status_line_not_the_thread(bot):
    request, log = _running(bot)
    log.emit(_step(request.id, "drain"))
    log.emit(Event(request.id, EventKind.PROGRESS, "40 of 100 pods gone", step="drain"))
    log.emit(Event(request.id, EventKind.PROGRESS, "90 of 100 pods gone", step="drain"))
    log.emit(_step(request.id, "drain", EventKind.STEP_SUCCEEDED))
    replies = bot.wait_thread(request.id, lambda r: r and "done" in r[0])
    assert len(replies) == 1 and "pods gone" not in replies[0]
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
    bot.wait_thread(request.id, lambda r: r)
    assert len(bot.sim.calls_to("chat.postMessage")) == 2  # the request, its step


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


def test_a_reply_slack_stores_after_the_client_gave_up_keeps_its_place(bot):
    """Under load a post can outlast slack_sdk's timeout and be stored after all. The lane looks
    for it (conversations.replies) before the thread gets anything else: every line once, in
    order (bot/post_once.py)."""
    request, log = _running(bot)
    bot.ctx.client.timeout = 2  # slack_sdk's own wait for an answer (the bot's is 10 s)
    held = bot.sim.holds.add("chat.postMessage", lambda p: "Step 2/8" in p.get("text", ""))
    for step in ("check", "join-material"):
        log.emit(_step(request.id, step))
        log.emit(_step(request.id, step, EventKind.STEP_SUCCEEDED))
    log.emit(_step(request.id, "probe"))
    held.wait_arrived()
    bot.sim.wait_for_calls("conversations.replies")  # the client gave up; the lane looks
    held.release()  # and Slack stores the post now, late

    replies = bot.wait_thread(request.id, lambda r: len(r) == 3 and "probe" in r[2])
    assert replies == [
        ":white_check_mark: Step 1/8 `check` done: check says hello",
        ":white_check_mark: Step 2/8 `join-material` done: join-material says hello",
        ":arrow_forward: Step 3/8 `probe` running: probe says hello",
    ]
    posted = [c for c in bot.sim.calls_to("chat.postMessage") if "Step 2/8" in c.params["text"]]
    assert len(posted) == 1  # found, not posted again


def test_a_step_that_ended_before_its_start_is_relayed_costs_one_post(bot):
    """A lane behind (many migrations in one channel) meets a step's start after the step ended:
    its reply is posted as done, from the step's record, and its "done" changes nothing."""
    request, log = _running(bot)
    bot.ctx.records.start(request.id, "check")  # what the worker records, before it says so
    started = Event(request.id, EventKind.STEP_STARTED, "checking", step="check", at=time.time())
    done = bot.ctx.records.finish(request.id, "check", Outcome.SUCCEEDED, "rules pass")
    seconds = done.seconds  # the worker says how long the step took, from its record
    ended = Event(request.id, EventKind.STEP_SUCCEEDED, "rules pass", step="check", seconds=seconds)
    log.emit(started)
    log.emit(ended)
    log.emit(_step(request.id, "join-material"))  # relayed after the two above
    replies = bot.wait_thread(request.id, lambda r: len(r) == 2)
    assert replies[0].startswith(":white_check_mark: Step 1/8 `check` done")
    assert replies[0].endswith(": rules pass")
    edits = [c for c in bot.sim.calls_to("chat.update") if c.params["ts"] != request.message_ts]
    assert edits == []  # one post for the step, no edit
