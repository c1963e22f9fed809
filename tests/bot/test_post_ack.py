"""The work after a `/join` ack runs off the acking process, from a Redis stream any replica's
post-ack process takes from (bot/post_ack.py, bot/post_ack_runner.py): a stopping replica
finishes what it took, a dead one's jobs are answered by another and never run twice."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from bot.commands import SlashCommands
from bot.post_ack import STREAM, PostAckJob, PostAckQueue
from bot.post_ack_runner import GROUP, PostAckRunner
from tests.bot.harness import CHANNEL, REQUESTER, BotHarness, buttons, text_of, until
from tests.bot.served import ServedBot
from tests.support.clusters import write_config


def _job(bot: BotHarness, rid: str, node: str) -> PostAckJob:
    url = bot.sim.response_url(rid, channel=CHANNEL, user=REQUESTER)
    return PostAckJob(f"{node} from clusterA to clusterB", REQUESTER, CHANNEL, url)


def _request_messages(bot: BotHarness, node: str) -> list[str]:
    return [text_of(m) for m in bot.messages() if buttons(m) and f"`{node}`" in text_of(m)]


def test_a_dead_replicas_jobs_are_answered_by_another_and_never_posted_twice(bot):
    """The first job had begun (its request message on its way to Slack) when its replica
    died: it is not run again, the person is told. The second had been taken, not begun: it
    runs on the replica that takes it over."""
    commands = SlashCommands(bot.ctx, hand_off=PostAckQueue(bot.redis).push)
    queue = PostAckQueue(bot.redis)
    held = bot.sim.holds.add("chat.postMessage")  # the first request message, held on its way
    dead = PostAckRunner(
        bot.redis, commands.run_job, commands.interrupted, consumer="dead", threads=1, block_ms=50
    ).start()
    live: PostAckRunner | None = None
    try:
        queue.push(_job(bot, "begun", "a-w-1"))
        held.wait_arrived()
        dead.stop(timeout=0)  # it dies here: no more reading, no more heartbeats
        queue.push(_job(bot, "taken", "a-w-2"))
        bot.redis.xreadgroup(GROUP, "ghost", {STREAM: ">"}, count=1)  # taken, never begun
        live = PostAckRunner(
            bot.redis,
            commands.run_job,
            commands.interrupted,
            consumer="live",
            threads=2,
            block_ms=50,
            stale_ms=200,
        ).start()
        assert "restarted while it worked on your `/join a-w-1" in bot.wait_answer("begun")
        held.release()  # the dead replica's post had reached Slack after all
        bot.sim.wait_for(lambda: _request_messages(bot, "a-w-2"), 60)
        until(lambda: dead.running == 0 and live is not None and live.running == 0, 30)
    finally:
        held.release()
        if live is not None:
            live.stop(30)
        dead.stop(30)
    assert len(_request_messages(bot, "a-w-1")) == 1  # posted once, by the replica that died
    assert len(_request_messages(bot, "a-w-2")) == 1
    assert not any("restarted" in answer for answer in bot.answers("taken"))
    assert bot.redis.xlen(STREAM) == 0  # every entry done and gone


def test_serve_ends_when_its_post_ack_process_ends(world, sim, redis_url, tmp_path):
    """Acks with nobody to do the work after them would be promises broken: the bot stops (exit
    1), and Kubernetes restarts the pod whole."""
    served = ServedBot(write_config(world, tmp_path), sim, redis_url, tmp_path / "serve.log")
    try:
        pid = served.process.pid
        (post_ack,) = map(int, Path(f"/proc/{pid}/task/{pid}/children").read_text().split())
        os.kill(post_ack, signal.SIGKILL)
        assert served.process.wait(60) == 1
        assert "the post-ack process ended" in served.log.read_text()
    finally:
        served.stop()
