"""Running the bot: Socket Mode, or HTTP on a production WSGI server; the relay beside it, and
the arrivals watcher when `arrivals` is configured (bot/arrivals.py).

Socket Mode (when `SLACK_APP_TOKEN` is set) needs no public URL: the bot opens a WebSocket to
Slack (bot/socket_mode.py). `--health-port` serves /livez and /readyz in either mode
(bot/health.py). HTTP mode serves `POST /slack/events` and `GET /healthz` with waitress, whose
listen backlog (1024) and thread pool keep acks fast under bursts — the stdlib server's backlog of 5
resets connections and pushes p99 to a second (shared/docs/performance.md).
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any, cast

import redis
from slack_bolt import App
from slack_bolt.error import BoltError
from waitress.server import create_server
from waitress.wasyncore import close_all

from bot.app import build_app, build_context
from bot.arrivals import ArrivalWatcher
from bot.availability import StoreProbe
from bot.context import BotContext
from bot.health import Health, HealthServer
from bot.http import SlackWsgi
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


@dataclass
class Bot:
    """The running parts of one bot process."""

    ctx: BotContext
    app: App
    relay: Relay


def assemble(settings: Settings) -> Bot:
    """Build the clients from settings, once; raise ConfigError when Slack refuses the token."""
    problems = []
    if settings.secrets.slack_bot_token is None:
        problems.append("SLACK_BOT_TOKEN: not set (the bot token, xoxb-…)")
    if problems:
        raise ConfigError(problems)
    warm_up()  # the Kubernetes client's classes load in seconds: now, not in the first /join
    client = redis.Redis.from_url(settings.secrets.redis_url)
    ctx = build_context(settings, redis=client, clusters=ClusterRegistry(settings))
    try:
        app = build_app(settings, redis=client, clusters=ctx.clusters, context=ctx)
    except BoltError as e:
        raise ConfigError([f"SLACK_BOT_TOKEN: Slack refused it: {e}"]) from None
    return Bot(ctx, app, Relay(ctx))


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


def run(
    settings: Settings,
    *,
    http: bool,
    host: str,
    port: int,
    threads: int,
    metrics_port: int | None = None,
    health_port: int | None = None,
) -> int:
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
    bot = assemble(settings)
    if metrics_port:
        metrics.serve(metrics_port, bot.ctx.redis, bot.ctx.store.active)
    stopping = threading.Event()
    _stop_on_signals(stopping.set)
    socket = (
        None
        if http or app_token is None
        else SocketModeBot(bot.app, app_token.get_secret_value(), bot.ctx.client)
    )
    health = (
        HealthServer(
            Health(
                relay_alive=lambda: bot.relay.alive,
                token=bot.ctx.token.problem,
                # HTTP mode: ready as long as live. A bot out of the Service during a Redis
                # outage leaves Slack with `dispatch_failed`; in it, it answers the outage itself
                store=StoreProbe(settings.secrets.redis_url).problem if socket else lambda: None,
                down_for=socket.down_for if socket is not None else None,
            ),
            host,
            health_port,
        ).start()
        if health_port
        else None
    )
    bot.relay.start()
    arrivals = ArrivalWatcher(bot.ctx).start() if settings.arrivals else None
    try:
        if http:
            secret, redis_url = settings.secrets.slack_signing_secret, settings.secrets.redis_url
            assert secret is not None
            wsgi = SlackWsgi(
                bot.app,
                secret.get_secret_value(),
                healthy=lambda: bot.relay.alive,
                ready=_first_problem(bot.ctx.token.problem, StoreProbe(redis_url).problem),
            )
            server = HttpServer(wsgi, host, port, threads).start()
            log.info("joinops bot: HTTP on %s:%d, POST /slack/events", host, server.port)
            stopping.wait()
            server.stop()
        else:
            assert socket is not None
            socket.connect()
            log.info("joinops bot: connected to Slack in Socket Mode")
            stopping.wait()
            socket.close()
    finally:
        bot.relay.stop()
        if arrivals is not None:
            arrivals.stop()
        if health is not None:
            health.stop()
    log.info("joinops bot: stopped")
    return 0


def _stop_on_signals(stop: Callable[[], object]) -> None:
    """SIGTERM (Kubernetes stopping the pod) and Ctrl-C stop the bot cleanly."""

    def handle(signum: int, frame: FrameType | None) -> None:
        log.info("joinops bot: stopping (signal %d)", signum)
        stop()

    signal.signal(signal.SIGTERM, handle)
    signal.signal(signal.SIGINT, handle)


def _first_problem(*checks: Callable[[], str | None]) -> Callable[[], str | None]:
    return lambda: next((p for p in (check() for check in checks) if p is not None), None)
