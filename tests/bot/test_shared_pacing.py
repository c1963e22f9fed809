"""Every process of the bot keeps to Slack's rate tiers together (bot/shared_pacing.py): Slack
counts calls per app, however many processes make them — a bot's acking and post-ack
processes, and its replicas'. Here two of them update one message as fast as they may, at
slacksim's tiers (Slack's shape, ten times faster): Slack answers none of the calls 429."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from bot.app import make_web_client
from tests.bot.harness import CHANNEL

CALLS = 12  # chat.update calls per thread; Tier 3 (50 a minute) keeps them to a few seconds


def test_two_processes_paced_together_meet_no_429(bot):
    processes = [make_web_client(bot.settings, bot.redis) for _ in range(2)]
    ts = processes[0].chat_postMessage(channel=CHANNEL, text="status")["ts"]

    def update(number: int) -> None:
        client = processes[number % 2]
        for call in range(CALLS):
            client.chat_update(channel=CHANNEL, ts=ts, text=f"status {number}.{call}")

    with ThreadPoolExecutor(4) as threads:
        list(threads.map(update, range(4)))
    updates = bot.sim.calls_to("chat.update")
    assert len([c for c in updates if c.status == 200]) == 4 * CALLS
    assert [c for c in updates if c.status == 429] == []
