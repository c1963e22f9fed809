"""A bot killed between claiming an event and posting its reply: after the restart exactly the
missing reply is posted, once, in its place, and nothing is posted twice: each step's one reply
ends edited to "done", and the thread has nine replies (eight steps and the outcome).

The seam is deterministic: slacksim holds the reply for step 2 on its way in (before Slack acts
on it), the test SIGKILLs the real `joinops serve` process while it waits, and the held call is
dropped unanswered, as when a process dies mid-request. A second process on the same host (the
same consumer in the relay's group) takes over.
"""

from __future__ import annotations

import re
from typing import Any

from slacksim.server import SlackSim
from slacksim.signing import CHANNEL_ID, block_actions_body, slash_command_body
from tests.bot.harness import APPROVER, REQUESTER, buttons, text_of
from tests.bot.served import ServedBot
from tests.support.clusters import write_config
from tests.support.engine import start_worker, stop_worker


def _replies(sim: SlackSim, ts: str) -> list[str]:
    return [text_of(m) for m in sim.thread(CHANNEL_ID, ts)]


def _done(replies: list[str]) -> bool:
    return any(r.startswith((":tada:", ":red_circle:")) for r in replies)


def test_a_reply_lost_to_a_crash_between_claim_and_post_is_posted_once_after_restart(
    world, sim, redis_url, tmp_path
):  # type: ignore[no-untyped-def]
    config = write_config(world, tmp_path, slack={"rate_scale": sim.tiers.speed})
    worker = start_worker(config, redis_url, tmp_path / "worker.log")
    held = sim.holds.add("chat.postMessage", lambda params: "Step 2/8" in params.get("text", ""))
    first = ServedBot(config, sim, redis_url, tmp_path / "first.log")
    second: ServedBot | None = None
    try:
        url = sim.response_url("cmd", channel=CHANNEL_ID, user=REQUESTER)
        first.send(slash_command_body(text="a-w-1 from clusterA to clusterB", response_url=url))
        message: dict[str, Any] = sim.wait_for(
            lambda: next((m for m in sim.messages(CHANNEL_ID).values() if buttons(m)), None), 20
        )
        ts, request_id = message["ts"], buttons(message)[0][1]
        click = sim.response_url("click", channel=CHANNEL_ID, user=APPROVER, message_ts=ts)
        first.send(
            block_actions_body(
                action_id="join_approve",
                value=request_id,
                user_id=APPROVER,
                message_ts=ts,
                response_url=click,
            )
        )
        held.wait_arrived(60)  # claimed, and on its way to Slack
        first.kill()
        held.drop()  # never reached Slack: the process that sent it is gone
        before = sim.thread(CHANNEL_ID, ts)
        assert not any("Step 2/8" in text_of(m) for m in before)

        second = ServedBot(config, sim, redis_url, tmp_path / "second.log")
        replies = sim.wait_for(lambda: _done(r := _replies(sim, ts)) and r, 90)
        after = sim.thread(CHANNEL_ID, ts)
    finally:
        for bot in (first, second):
            if bot is not None:
                bot.stop()
        stop_worker(worker)

    # what was posted stays where it was, nothing before it again (edited in place at most)
    assert [m["ts"] for m in after[: len(before)]] == [m["ts"] for m in before]
    assert replies[-1].startswith(":tada:")
    lines = [line for r in replies[:-1] for line in r.split("\n")]  # ended meanwhile: grouped
    places = [int(m.group(1)) for line in lines if (m := re.search(r"Step (\d)/8", line))]
    assert places == list(range(1, 9))  # every step shown once, in order, the lost one too
    assert all(line.startswith(":white_check_mark: Step ") for line in lines)  # each ended done
    assert len(replies) == len(set(replies)) <= 8 + 1
    assert sim.notifications(CHANNEL_ID, ts) == len(replies)
    posts = [c for c in sim.calls_to("chat.postMessage") if "Step 2/8" in c.params["text"]]
    assert len(posts) == 1  # the dropped call is not recorded: Slack never answered it
