"""No state store, no requests: the bot takes nothing it could lose.

Redis holds every request, decision, queued job and audit line. The ack waits on nothing on the
network, so it does not ask Redis: a `StoreWatch` thread PINGs it every `WATCH_EVERY` seconds
and keeps the answer, and while the last PING failed a command's ack says "cannot take requests
right now … nothing was recorded" and a click gets the same through its response_url — nothing
is posted, nothing is half-recorded. `/join help` needs no Redis and still answers. `/healthz`
and `/readyz` PING with the same probe when asked.

Redis can also go away after that check, while a command's work runs: `store_answers` is asked
again right before a request message is posted, and `record_posted` stores the request in one
write with its message's timestamp; if that write fails the message loses its buttons.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError, SlackRequestError

from bot import grammar, parsed, payloads
from bot.context import BotContext
from bot.middleware import answer_click_later, ephemeral_ack
from bot.render import blocks as render_blocks
from bot.texts import access as access_texts
from joinops.requests.store import Request

log = logging.getLogger(__name__)

PROBE_TIMEOUT = 1.0  # seconds for Redis to answer a PING
WATCH_EVERY = 0.5  # seconds between two PINGs of the watch whose answer the acks read


class StoreProbe:
    """One PING on a connection of its own, with short timeouts and no retries: the bot's own
    client may wait seconds on a dead Redis, and Slack gives up on an ack after three."""

    def __init__(self, redis_url: str, timeout: float = PROBE_TIMEOUT) -> None:
        self._client = redis.Redis.from_url(
            redis_url,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 0),
        )

    def problem(self) -> str | None:
        """Why the state store cannot be used now; None when it answers."""
        try:
            self._client.ping()
        except (redis.RedisError, OSError) as e:
            return f"redis unreachable: {e}"
        return None

    def close(self) -> None:
        self._client.close()


class StoreWatch:
    """The last answer of a PING repeated every `every` seconds on a thread of its own, read from
    memory. The first PING is made when the watch is built (before any ack). The thread holds
    the watch only weakly: it ends with `close()`, or when the watch is no longer used."""

    def __init__(self, probe: StoreProbe, every: float = WATCH_EVERY) -> None:
        self._problem = probe.problem()
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=_watch,
            args=(weakref.ref(self), probe, every, self._stop),
            name="joinops-store-watch",
            daemon=True,
        )
        self._thread.start()

    def problem(self) -> str | None:
        """Why the state store could not be used at the last PING; None when it answered."""
        return self._problem

    def close(self) -> None:
        self._stop.set()
        self._thread.join(PROBE_TIMEOUT * 3)


def _watch(
    ref: weakref.ref[StoreWatch], probe: StoreProbe, every: float, stop: threading.Event
) -> None:
    while not stop.wait(every):
        problem = probe.problem()
        watch = ref()
        if watch is None:
            break
        if problem != watch._problem:
            log.info("state store %s", problem or "answering again")
        watch._problem = problem
        del watch
    probe.close()


class StoreCheck:
    def __init__(self, watch: StoreWatch, known_clusters: list[str], answers: Executor) -> None:
        self.watch = watch
        self.known_clusters = known_clusters
        self.answers = answers  # where a click's answer is sent from, after the ack

    def check(
        self, body: dict[str, Any], respond: Any, next: Callable[[], BoltResponse]
    ) -> BoltResponse | None:
        command = payloads.is_slash_command(body)
        if not command and not payloads.is_block_actions(body):
            return next()
        problem = self.watch.problem()
        if problem is None or (command and self._asks_for_help(body)):
            return next()  # help needs no store: parsed only when the store is away
        log.warning("refused a %s: %s", "command" if command else "click", problem)
        if command:
            return ephemeral_ack(access_texts.store_unreachable())
        return answer_click_later(self.answers, respond, access_texts.store_unreachable())

    def _asks_for_help(self, body: dict[str, Any]) -> bool:
        try:
            command = grammar.parse(payloads.command_text(body), self.known_clusters)
        except grammar.GrammarError:
            return False
        return isinstance(command, parsed.Help)


# ---- a request and its message: both, or neither -----------------------------------------------


def posting(ctx: BotContext, request: Request) -> bool:
    """Right before a request message is posted, its record written after it: does Redis answer
    now? If so the request is said to be posting, so that a click quicker than its record waits
    for it (`RequestStore.get_clicked`) rather than finding no such request."""
    try:
        ctx.store.posting(request.id)
    except redis.RedisError as e:
        log.warning("not posting a request: the state store is unreachable: %s", e)
        return False
    return True


def store_answers(ctx: BotContext) -> bool:
    """Does Redis answer now? Asked right before posting a request message."""
    try:
        ctx.redis.ping()
    except redis.RedisError as e:
        log.warning("not posting a request: the state store is unreachable: %s", e)
        return False
    return True


def record_posted(ctx: BotContext, request: Request) -> bool:
    """Store a request whose message was just posted, in one atomic write. If Redis is gone
    the message loses its buttons and says it was not recorded: no message stays up that could
    be approved with no record behind it, and no record stays without its message."""
    try:
        ctx.store.create(request)
        return True
    except redis.RedisError as e:
        log.warning("request %s not recorded: the state store is unreachable: %s", request.id, e)
    text = access_texts.not_recorded(request.node, request.source, request.target)
    try:
        ctx.client.chat_update(
            channel=request.channel,
            ts=request.message_ts,
            text=text,
            blocks=render_blocks.reply(text),
        )
    except (SlackApiError, SlackRequestError, OSError) as e:
        log.warning("request %s: could not withdraw its message: %s", request.id, e)
    return False
