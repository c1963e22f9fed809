"""Slack answering 429 (with Retry-After) and 5xx for a while during a migration: the thread's
replies arrive late, but in order and once — the same replies, in the same order, as a
migration nobody disturbed — and the request message ends showing the outcome.

Posts meet 429s (Slack did not post: retried); updates meet 429s and server errors (an update
may be repeated). Each stretch of failures is longer than the SDK's own retry counts would have
waited out (three server errors); the bot's client waits them out for a bounded time
(bot/slack_retry.py). The backoff between server errors is shortened here; Retry-After is
honoured as sent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import redis

from bot import slack_retry
from joinops.requests.lifecycle import State
from kubesim import NodeSpec, World
from tests.bot.harness import APPROVER, REQUESTER
from tests.support.clusters import write_config
from tests.support.engine import start_worker, stop_worker
from tests.support.metrics import sample

POST_ERRORS = "joinops_slack_api_errors_total"


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    with World(pod_grace_seconds=0.05, join_seconds=0.1) as w:
        w.add_cluster(
            "clusterA",
            version="v1.31.4",
            control_plane_endpoint="cp.a.test:6443",
            nodes=[NodeSpec("a-cp-1", role="control-plane"), NodeSpec("a-w-1"), NodeSpec("a-w-2")],
        )
        w.add_cluster(
            "clusterB",
            version="v1.32.2",
            control_plane_endpoint="cp.b.test:6443",
            nodes=[NodeSpec("b-cp-1", role="control-plane")],
        )
        yield w


@pytest.fixture
def redis_client(shared_redis: redis.Redis) -> redis.Redis:
    return shared_redis  # not flushed per test: the module's worker keeps its keys


@pytest.fixture(scope="module")
def worker(world, shared_redis, redis_url_module, tmp_path_factory):  # type: ignore[no-untyped-def]
    directory = tmp_path_factory.mktemp("worker")
    process = start_worker(write_config(world, directory), redis_url_module, directory / "w.log")
    yield process
    stop_worker(process)


def _done(replies: list[str]) -> bool:
    return any(r.startswith((":tada:", ":red_circle:")) for r in replies)


def _normal(replies: list[str], request_id: str, node: str) -> list[str]:
    """What does not depend on the run, line by line (steps that ended while their reply waited
    for Slack share it: how many do depends on timing): ids, node names, times taken out."""
    out = []
    for reply in (line for r in replies for line in r.split("\n")):  # grouped steps: a line each
        reply = reply.replace(request_id, "REQ").replace(node, "NODE")
        reply = re.sub(r"<!date\^\d+\^[^|>]*\|[^>]*>", "<DATE>", reply)
        reply = re.sub(r"bootstrap token [a-z0-9]{6}\b", "bootstrap token ID", reply)
        reply = re.sub(r"with address [0-9.]+\d", "with address IP", reply)
        reply = re.sub(r"\b\d+(\.\d+)? ?(s|ms|min)\b", "T", reply)
        out.append(reply)
    return out


def _migrate(bot, node: str, disturb=lambda stage: None) -> tuple[list[str], str]:  # type: ignore[no-untyped-def]
    before = len(bot.messages())
    bot.slash(f"{node} from clusterA to clusterB")
    message = bot.sim.wait_for(lambda: len(bot.messages()) > before and bot.messages()[-1])
    request = bot.request_from_message(message)
    disturb("approving")
    bot.approve(request.id, APPROVER)
    bot.wait_thread(request.id, lambda r: any("Step 4/8" in x for x in r), timeout=60)
    disturb("cordon")
    bot.wait_thread(request.id, lambda r: any("Step 7/8" in x for x in r), timeout=60)
    disturb("wait-joined")
    replies = bot.wait_thread(request.id, _done, timeout=90)
    bot.wait_root(request.id, lambda t: "Succeeded" in t, timeout=60)
    return _normal(replies, request.id, node), request.id


def test_slack_failing_for_a_while_delays_replies_but_keeps_them_in_order_and_once(
    make_bot, worker, monkeypatch
):
    bot = make_bot()
    quiet, _ = _migrate(bot, "a-w-1")
    assert quiet[-1].startswith(f":tada: <@{REQUESTER}>")
    assert len(quiet) == 8 + 1  # a line per step, edited to its end, and the outcome

    monkeypatch.setattr(slack_retry, "FIRST_PAUSE", 0.02)
    sim = bot.sim
    faults = []
    errors_before = sample(POST_ERRORS, method="chat.postMessage")

    def disturb(stage: str) -> None:
        if stage == "approving":  # the first step's reply and the message update
            faults.append(sim.faults.add("chat.postMessage", status=429, retry_after=1, times=2))
            faults.append(sim.faults.add("chat.update", status=503, times=4))
        elif stage == "cordon":
            faults.append(sim.faults.add("chat.postMessage", status=429, retry_after=1, times=3))
            faults.append(sim.faults.add("chat.update", status=500, times=5))
        else:
            faults.append(sim.faults.add("chat.postMessage", status=429, retry_after=1, times=2))
            faults.append(sim.faults.add("chat.update", status=502, times=4))
            faults.append(sim.faults.add("chat.update", status=429, retry_after=1, times=1))

    disturbed, request_id = _migrate(bot, "a-w-2", disturb)
    # a step's reply may still be edited after the root says Succeeded (its edit waiting out
    # the last injected failures): what the relay took on is done before faults are counted
    assert bot.relay.idle(120)

    # The first stage's failures are all met: they are in place before the approval, and every
    # reply and edit of the migration comes after it. A later stage's may not be: under load the
    # engine runs ahead of a thread held back by the first ones, and the thread then folds the
    # steps that ended meanwhile into fewer replies (by design, bot/step_replies.py) — by the
    # time a later stage's failures are in place, what they would have met may be sent already.
    first_stage = faults[:2]
    assert [f.hits for f in first_stage] == [f.times for f in first_stage], faults
    assert disturbed == quiet  # late, but every line, once, in the same order
    assert bot.request(request_id).state is State.SUCCEEDED
    met = sum(f.hits for f in faults if f.method == "chat.postMessage")
    assert sample(POST_ERRORS, method="chat.postMessage") - errors_before == met
