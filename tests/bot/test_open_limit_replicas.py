"""`policy.max_open_requests_per_user` holds across replicas: the asks in flight are counted in
Redis (bot/open_limit.py), so two bots' post-ack processes taking one person's burst between
them refuse exactly what one bot alone would."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

from bot.open_limit import OpenRequestLimit
from tests.bot.harness import REQUESTER, BotHarness
from tests.support.clusters import write_config

LIMIT = 3
REFUSAL = (
    f"You have {LIMIT} requests open, the most one person may have at once "
    f"(`policy.max_open_requests_per_user`: {LIMIT}), so nothing was asked."
)

# A second process holds one slot of the person's, through its own OpenRequestLimit on the same
# Redis, until told to give it back (a line on stdin) — as another replica's post-ack process
# checking an ask of theirs.
HOLDER = """
import sys
import redis
from bot.app import build_context
from bot.open_limit import OpenRequestLimit
from joinops.clusters.registry import ClusterRegistry
from joinops.settings import load_settings

settings = load_settings()
client = redis.Redis.from_url(settings.secrets.redis_url)
ctx = build_context(settings, redis=client, clusters=ClusterRegistry(settings))
with OpenRequestLimit(ctx).slot(sys.argv[1]) as refusal:
    print("refused" if refusal else "holding", flush=True)
    sys.stdin.readline()
"""


def test_slots_held_by_another_process_count_against_the_person(make_bot, tmp_path):
    bot = make_bot(policy={"max_open_requests_per_user": LIMIT}, check_worker=False)
    other = make_bot(policy={"max_open_requests_per_user": LIMIT}, check_worker=False)
    ours, second = OpenRequestLimit(bot.ctx), OpenRequestLimit(other.ctx)  # two replicas'
    holder = _hold_in_another_process(bot, tmp_path)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        with ExitStack() as held:
            assert held.enter_context(second.slot(REQUESTER)) is None
            assert held.enter_context(ours.slot(REQUESTER)) is None
            # three asks in flight across three processes' limits: a fourth is refused, why said
            for limit in (ours, second):
                with limit.slot(REQUESTER) as refusal:
                    assert refusal is not None and REFUSAL in refusal
        # given back on completion: two free again while the other process holds its one
        with ours.slot(REQUESTER) as first, second.slot(REQUESTER) as then:
            assert first is None and then is None
            with ours.slot(REQUESTER) as third:
                assert third is not None and REFUSAL in third
    finally:
        holder.communicate("done\n", timeout=60)
    assert holder.returncode == 0
    with ExitStack() as held:  # the other process gave its slot back as it finished
        taken = [held.enter_context(ours.slot(REQUESTER)) for _ in range(LIMIT)]
        assert taken == [None] * LIMIT


def _hold_in_another_process(bot: BotHarness, directory: Path) -> subprocess.Popen[str]:
    config = write_config(bot.world, directory, **bot.overrides)
    env = {
        **os.environ,
        "JOINOPS_CONFIG": str(config),
        "REDIS_URL": bot.redis_url,
        "SLACK_BOT_TOKEN": bot.sim.token,
        "SLACK_API_URL": bot.sim.api_url,
    }
    return subprocess.Popen(
        [sys.executable, "-c", HOLDER, REQUESTER],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
