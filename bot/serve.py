"""Running the bot: Socket Mode, or HTTP on a production WSGI server, in the acking process; the
post-ack process beside it (bot/post_ack_process.py: the work after the acks, and on one replica
at a time the relay and the arrivals watcher).

Socket Mode (when `SLACK_APP_TOKEN` is set) needs no public URL: the bot opens a WebSocket to
Slack (bot/socket_mode.py), one per replica (Slack spreads the events over an app's links, up to
ten). `--health-port` serves /livez and /readyz in either mode (bot/health.py). HTTP mode serves
`POST /slack/events` and `GET /healthz` with waitress, whose listen backlog (1024) and thread pool
keep acks fast under bursts — the stdlib server's backlog of 5 resets connections and pushes p99
to a second (shared/docs/performance.md).

Any number of replicas may run (the chart's default is two): each acks what reaches it and pushes
the work; any replica's post-ack process takes it. Stopping (SIGTERM, Ctrl-C) never drops a
request: the bot is not ready any more (/readyz, /healthz: 503) but keeps answering for
`--drain-seconds`, while the Service or the Ingress stops sending it new ones; then it stops
listening, finishes the requests it has (an HTTP request or a Socket Mode envelope), and stops its
post-ack process, which finishes the jobs it runs and hands the relay to another replica.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable
from functools import cached_property
from types import FrameType
from typing import Any, Protocol, cast

import redis
from slack_bolt import App
from slack_bolt.error import BoltError
from waitress.server import create_server
from waitress.wasyncore import close_all

from bot.app import build_app, build_context
from bot.availability import StoreProbe
from bot.companion import Companion
from bot.context import BotContext
from bot.health import Health, HealthServer
from bot.http import SlackWsgi
from bot.post_ack import PostAckQueue
from bot.relay import Relay
from bot.socket_mode import SocketModeBot
from joinops import metrics
from joinops.clusters.kube import warm_up
from joinops.clusters.registry import ClusterRegistry
from joinops.errors import ConfigError
from joinops.settings import Settings

log = logging.getLogger(__name__)

BACKLOG = 1024  # pending connections the kernel queues for us
HTTP_THREADS = 16  # requests served at once; each holds a thread only until bolt's ack
# for the server loop, then its request threads, to end once told to stop: a request still being
# answered after that is left to finish on its own (the process is ending; a stop never hangs)
STOP_SECONDS = 5
FINISH_SECONDS = 10.0  # for the requests being answered when the bot stops listening
COMPANION_MARGIN = 30.0  # beyond the check timeout, for the post-ack process to stop
STOPPING = "stopping: the Service is letting go of this replica"


class Bot:
    """The running parts of one bot process. `relay` (built when first used) is for a bot
    whose work after the acks runs in this process (`joinops sandbox`)."""

    def __init__(self, ctx: BotContext, app: App) -> None:
        self.ctx = ctx
        self.app = app

    @cached_property
    def relay(self) -> Relay:
        return Relay(self.ctx)


def assemble(settings: Settings, *, queued: bool = False) -> Bot:
    """Build the clients from settings, once; raise ConfigError when Slack refuses the token.
    `queued`: the work after the acks is pushed for a post-ack process (`joinops serve`), not
    run here."""
    problems = []
    if settings.secrets.slack_bot_token is None:
        problems.append("SLACK_BOT_TOKEN: not set (the bot token, xoxb-…)")
    if problems:
        raise ConfigError(problems)
    warm_up()  # the Kubernetes client's classes load in seconds: now, not in the first /join
    client = redis.Redis.from_url(settings.secrets.redis_url)
    ctx = build_context(settings, redis=client, clusters=ClusterRegistry(settings))
    hand_off = PostAckQueue(client).push if queued else None
    try:
        app = build_app(
            settings, redis=client, clusters=ctx.clusters, context=ctx, hand_off=hand_off
        )
    except BoltError as e:
        raise ConfigError([f"SLACK_BOT_TOKEN: Slack refused it: {e}"]) from None
    return Bot(ctx, app)


class HttpServer:
    """A waitress server for the bot's WSGI app, started on a thread or in the foreground."""

    def __init__(
        self,
        wsgi: SlackWsgi,
        host: str = "0.0.0.0",
        port: int = 3000,
        threads: int = HTTP_THREADS,
    ) -> None:
        self._server = create_server(
            wsgi,
            host=host,
            port=port,
            threads=threads,
            backlog=BACKLOG,
            ident="joinops",
            clear_untrusted_proxy_headers=True,
        )
        self.port = int(cast(Any, self._server).effective_port)
        self.url = f"http://{host if host != '0.0.0.0' else '127.0.0.1'}:{self.port}"
        self._thread: threading.Thread | None = None

    def start(self) -> HttpServer:
        self._thread = threading.Thread(target=self._server.run, name="joinops-http", daemon=True)
        self._thread.start()
        return self

    def finish(self, timeout: float = FINISH_SECONDS) -> bool:
        """Stop listening, then wait for the requests being answered (up to `timeout` s);
        False if some were still at it. Call `stop()` after it."""
        server = cast(Any, self._server)
        closed = threading.Event()

        def close_listener() -> None:
            server.accepting = False
            server.del_channel()  # out of the loop's map: no more accepts
            server.socket.close()  # new connections are refused, not queued
            closed.set()

        if self._thread is None or not self._thread.is_alive():
            return True
        server.trigger.pull_trigger(close_listener)
        closed.wait(STOP_SECONDS)
        deadline = time.monotonic() + timeout
        while _answering(server) and time.monotonic() < deadline:
            time.sleep(0.02)
        return not _answering(server)

    def stop(self) -> None:
        """Stop listening and close every connection, from inside the server's own loop (so its
        select wakes at once instead of at its next one-second tick)."""
        server = cast(Any, self._server)
        if self._thread is not None and self._thread.is_alive():
            try:
                server.trigger.pull_trigger(lambda: close_all(server._map, ignore_all=True))
            except OSError:  # the loop already closed its trigger: close from here instead
                server.close()
            self._thread.join(STOP_SECONDS)
        else:
            server.close()
        # the request threads: waitress leaves them waiting for tasks unless told to end
        server.task_dispatcher.shutdown(timeout=STOP_SECONDS)


def _answering(server: Any) -> bool:
    """Is a request being read, worked on or written on any of waitress's connections? (An idle
    kept-alive connection is none of these: waitress's `request` is the one being read.)"""
    channels = list(server.active_channels.values())
    return any(c.request is not None or c.requests or c.total_outbufs_len for c in channels)


def run(
    settings: Settings,
    *,
    http: bool,
    host: str,
    port: int,
    threads: int,
    metrics_port: int | None = None,
    health_port: int | None = None,
    drain_seconds: float = 0.0,
    companion_args: list[str] | None = None,
) -> int:
    """The acking process; its post-ack process is started with `companion_args`."""
    if http and settings.secrets.slack_signing_secret is None:
        raise ConfigError(
            ["SLACK_SIGNING_SECRET: not set; HTTP mode verifies every request with it"]
        )
    app_token = settings.secrets.slack_app_token
    if not http and app_token is None:
        raise ConfigError(
            [
                "SLACK_APP_TOKEN: not set. Set it (xapp-…, with connections:write) for Socket "
                "Mode, or serve HTTP with `joinops serve --http --port PORT`"
            ]
        )
    bot = assemble(settings, queued=True)
    if metrics_port:
        metrics.serve(metrics_port, bot.ctx.redis, bot.ctx.store.active)
    stopping = threading.Event()
    _stop_on_signals(stopping.set)
    companion = Companion(companion_args or [])
    health: HealthServer | None = None
    code = 0
    try:
        socket = (
            None
            if http or app_token is None
            else SocketModeBot(bot.app, app_token.get_secret_value(), bot.ctx.client)
        )
        health = _health(settings, bot, companion, socket, host, health_port, stopping)
        if http:
            front: Front = _http_front(settings, bot, companion, stopping, host, port, threads)
        else:
            assert socket is not None
            front = socket.connect()
            log.info("joinops bot: connected to Slack in Socket Mode")
        code = _until_stopped(stopping, companion)
        _drain(drain_seconds)
        if not front.finish(FINISH_SECONDS):
            log.warning("joinops bot: stopped with requests still being answered")
        front.stop()
    finally:
        companion.stop(settings.timeouts.check.total_seconds() + COMPANION_MARGIN)
        if health is not None:
            health.stop()
    log.info("joinops bot: stopped")
    return code


class Front(Protocol):
    """Where Slack's requests come in: HTTP, or the Socket Mode link."""

    def finish(self, timeout: float) -> bool: ...
    def stop(self) -> None: ...


def _http_front(
    settings: Settings,
    bot: Bot,
    companion: Companion,
    stopping: threading.Event,
    host: str,
    port: int,
    threads: int,
) -> HttpServer:
    secret, redis_url = settings.secrets.slack_signing_secret, settings.secrets.redis_url
    assert secret is not None
    wsgi = SlackWsgi(
        bot.app,
        secret.get_secret_value(),
        healthy=companion.alive,
        ready=_first_problem(
            _unless(stopping, STOPPING), bot.ctx.token.problem, StoreProbe(redis_url).problem
        ),
    )
    server = HttpServer(wsgi, host, port, threads).start()
    log.info("joinops bot: HTTP on %s:%d, POST /slack/events", host, server.port)
    return server


def _health(
    settings: Settings,
    bot: Bot,
    companion: Companion,
    socket: SocketModeBot | None,
    host: str,
    port: int | None,
    stopping: threading.Event,
) -> HealthServer | None:
    """The probes' server on `port`, if one is wanted."""
    if not port:
        return None
    health = Health(
        relay_alive=companion.alive,  # the post-ack process, which runs the relay when it leads
        token=bot.ctx.token.problem,
        # HTTP mode: ready as long as live. A bot out of the Service during a Redis outage
        # leaves Slack with `dispatch_failed`; in it, it answers the outage itself
        store=StoreProbe(settings.secrets.redis_url).problem if socket else lambda: None,
        down_for=socket.down_for if socket is not None else None,
        stopping=_unless(stopping, STOPPING),
    )
    return HealthServer(health, host, port).start()


def _until_stopped(stopping: threading.Event, companion: Companion) -> int:
    """Until a signal (0), or until the post-ack process ends by itself (1: the bot stops too,
    and is restarted whole)."""
    while not stopping.wait(1.0):
        if not companion.alive():
            log.error(
                "joinops bot: the post-ack process ended (exit code %s); stopping",
                companion.exit_code(),
            )
            stopping.set()
            return 1
    return 0


def _drain(seconds: float) -> None:
    """Not ready, still answering: while the Service and the Ingress take this replica out."""
    if seconds > 0:
        log.info("joinops bot: not ready; answering for %.0f s more, then stopping", seconds)
        threading.Event().wait(seconds)


def _stop_on_signals(stop: Callable[[], object]) -> None:
    """SIGTERM (Kubernetes stopping the pod) and Ctrl-C stop the bot cleanly."""

    def handle(signum: int, frame: FrameType | None) -> None:
        log.info("joinops bot: stopping (signal %d)", signum)
        stop()

    signal.signal(signal.SIGTERM, handle)
    signal.signal(signal.SIGINT, handle)


def _unless(event: threading.Event, problem: str) -> Callable[[], str | None]:
    return lambda: problem if event.is_set() else None


def _first_problem(*checks: Callable[[], str | None]) -> Callable[[], str | None]:
    return lambda: next((p for p in (check() for check in checks) if p is not None), None)
