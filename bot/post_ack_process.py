"""`joinops serve`'s second process: everything after the acks, so the acking one only acks.

The acking process starts it (`joinops serve --post-ack`, bot/companion.py). It runs:
- the work after each `/join` ack, taken from the stream every replica's acks push to
  (bot/post_ack_runner.py), on `WORK_THREADS` threads: the rule checks asked of a worker, the
  request message posted, the records written;
- on one replica at a time (bot/lease.py: the lease `joinops:bot:leader`): the relay, and the
  arrivals watcher when `arrivals` is configured. The relay is one consumer of its group whatever
  the replica count, always under the same name (`RELAY_CONSUMER`): every entry is delivered once,
  a channel's replies by one lane in order, Slack's posting budget kept by one pacer; a replica
  taking over first delivers what its predecessor left unacknowledged (bot/relay.py, `_resume`).
  The sweeps in the relay (Ignition files due for deletion, roots wanted) run there, so once; the
  arrivals watcher's rounds too (its announcements are also claimed by compare-and-set).

It runs at a lower CPU priority than the acking process (`--post-ack-priority`,
bot/post_ack_priority.py: Linux's `SCHED_IDLE` as the chart runs it, niceness 10 by default):
when both want the CPU — a burst of commands acked while the work of the first ones runs — the
acks go first, as if the work ran on another machine.

SIGTERM (or Ctrl-C): it takes no more jobs and finishes those it runs (for up to the check
timeout and a margin: what is still running then is answered by the replica that takes it over),
stops the relay and the watcher, gives the lease back, and exits 0.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
from collections.abc import Callable
from types import FrameType

import redis

from bot.app import build_context
from bot.arrivals import ArrivalWatcher
from bot.commands import WORK_THREADS, SlashCommands
from bot.context import BotContext
from bot.lease import Leader, Lease, Part
from bot.post_ack import PostAckQueue
from bot.post_ack_priority import DEFAULT, Priority, step_back
from bot.post_ack_runner import PostAckRunner
from bot.relay import Relay
from joinops.clusters.kube import warm_up
from joinops.clusters.registry import ClusterRegistry
from joinops.errors import ConfigError
from joinops.settings import Settings

log = logging.getLogger(__name__)

LEADER_KEY = "joinops:bot:leader"
RELAY_CONSUMER = "joinops-relay"  # the relay's name in its group, whichever replica leads
STOP_MARGIN = 10.0  # seconds beyond the check timeout a stopping job may take


def replica_name() -> str:
    """This process among the replicas: its host (the pod's name in Kubernetes) and pid."""
    return f"{socket.gethostname()}-{os.getpid()}"


def leading_parts(ctx: BotContext) -> list[Callable[[], Part]]:
    """What only the lease holder runs, each made and started when it takes the lease."""
    parts: list[Callable[[], Part]] = [lambda: Relay(ctx, consumer=RELAY_CONSUMER).start()]
    if ctx.settings.arrivals:
        parts.append(lambda: ArrivalWatcher(ctx).start())
    return parts


def run(settings: Settings, priority: Priority = DEFAULT) -> int:
    if settings.secrets.slack_bot_token is None:
        raise ConfigError(["SLACK_BOT_TOKEN: not set (the bot token, xoxb-…)"])
    running_at = step_back(priority)  # first: every thread started from here on inherits it
    warm_up()  # the Kubernetes client's classes load in seconds: now, not in the first job
    client = redis.Redis.from_url(settings.secrets.redis_url)
    ctx = build_context(settings, redis=client, clusters=ClusterRegistry(settings))
    name = replica_name()
    commands = SlashCommands(ctx, hand_off=PostAckQueue(client).push)
    runner = PostAckRunner(
        client, commands.run_job, commands.interrupted, consumer=name, threads=WORK_THREADS
    )
    leader = Leader(Lease(client, LEADER_KEY, name), leading_parts(ctx), "relay and arrivals")
    stopping = threading.Event()
    _stop_on_signals(stopping.set)
    runner.start()
    leader.start()
    log.info("joinops bot: post-ack process %s running (%s)", name, running_at)
    stopping.wait()
    finished = runner.stop(settings.timeouts.check.total_seconds() + STOP_MARGIN)
    if not finished:
        log.warning("joinops bot: post-ack jobs still running at the stop; another replica says")
    leader.stop()
    ctx.clusters.close()
    client.close()
    log.info("joinops bot: post-ack process %s stopped", name)
    return 0


def _stop_on_signals(stop: Callable[[], object]) -> None:
    def handle(signum: int, frame: FrameType | None) -> None:
        log.info("joinops bot: post-ack process stopping (signal %d)", signum)
        stop()

    signal.signal(signal.SIGTERM, handle)
    signal.signal(signal.SIGINT, handle)
