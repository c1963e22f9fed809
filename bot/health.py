"""The bot's health endpoints (`joinops serve --health-port N`), for Kubernetes' probes.

- `GET /livez`: 200 while the process can do its job by itself — its post-ack process (which
  does the work after the acks and, on the replica that leads, posts every reply in the
  threads: bot/post_ack_process.py) is alive, Slack accepts the bot token (bot/token_state.py: a
  revoked token fails it, so that a restart picks up a new one), and in Socket Mode the link
  to Slack is up or has been down less than `grace` seconds (the SDK reconnects by itself after
  a dropped link or a refresh request; a link down longer is a stuck client, and a restart
  fixes it). Redis is not part of
  liveness: restarting the bot does not bring Redis back, and the bot answers "cannot take
  requests right now" while it is gone.
- `GET /readyz`: 200 when live, connected now, and Redis answers a PING (bot/availability.py);
  503 from the moment the bot is told to stop, while it still answers (bot/serve.py): the
  Service sends its requests to the other replicas.
  In HTTP mode `serve` gives no Redis check: ready is live (out of the Service, Slack would
  answer `dispatch_failed`; in it, the bot answers a Redis outage itself).

503 with the reason as text otherwise. A tiny stdlib server on its own thread: the probes must
answer even when every HTTP thread of the Slack side is busy.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

log = logging.getLogger(__name__)

GRACE = 60.0  # seconds the Socket Mode link may be down (reconnecting) and the bot still live
LIVE_PATH = "/livez"
READY_PATH = "/readyz"


class Health:
    """What the probes answer. down_for: seconds the Socket Mode link has been down, None
    while it is up (omit in HTTP mode). relay_alive: is the process that runs the relay (the
    post-ack process, under `joinops serve`) running. store: why Redis cannot take requests now,
    None when it can. stopping: why the bot takes no new requests (it is stopping), if so."""

    def __init__(
        self,
        *,
        relay_alive: Callable[[], bool],
        store: Callable[[], str | None] = lambda: None,
        down_for: Callable[[], float | None] | None = None,
        grace: float = GRACE,
        token: Callable[[], str | None] = lambda: None,
        stopping: Callable[[], str | None] = lambda: None,
    ) -> None:
        self.relay_alive = relay_alive
        self.stopping = stopping
        self.token = token
        self.store = store
        self.down_for = down_for
        self.grace = grace

    def live_problem(self) -> str | None:
        if not self.relay_alive():
            return "relay stopped"
        refused = self.token()
        if refused is not None:
            return refused  # a restart picks up a new token from its Secret
        down = self.down_for() if self.down_for is not None else None
        if down is not None and down > self.grace:
            return f"Socket Mode link down for {down:.0f} s (more than {self.grace:g} s)"
        return None

    def ready_problem(self) -> str | None:
        problem = self.stopping() or self.live_problem()
        if problem is None and self.down_for is not None and self.down_for() is not None:
            problem = "Socket Mode link down, reconnecting"
        return problem or self.store()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    health: Health


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # probes every few seconds would drown the log

    def do_GET(self) -> None:
        checks = {
            LIVE_PATH: self.server.health.live_problem,
            READY_PATH: self.server.health.ready_problem,
        }
        check = checks.get(self.path.split("?")[0])
        if check is None:
            status, text = 404, "not found"
        else:
            try:
                problem = check()
            except Exception as e:  # a probe must answer, not hang or crash the server
                problem = f"health check failed: {type(e).__name__}"
            status, text = (503, problem) if problem else (200, "ok")
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_HEAD = do_GET


class HealthServer:
    """Serves `health` on host:port (0 picks a free port) from a thread of its own."""

    def __init__(self, health: Health, host: str = "0.0.0.0", port: int = 8081) -> None:
        self._server = _Server((host, port), _Handler)
        self._server.health = health
        self.port = self._server.server_port
        self.url = f"http://{host if host != '0.0.0.0' else '127.0.0.1'}:{self.port}"
        self._thread: threading.Thread | None = None

    def start(self) -> HealthServer:
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.1},
            name="joinops-health",
            daemon=True,
        )
        self._thread.start()
        log.info("joinops bot: health on port %d (%s, %s)", self.port, LIVE_PATH, READY_PATH)
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(5)
        self._server.server_close()
