"""The bot over Socket Mode: slack_sdk's builtin WebSocket client (`SteadyClient` below: no
extra package) and bolt's dispatch, with what they lack for a bot that must stay up.

- Every envelope is acked, whatever it holds. Bolt acks only what a listener answered: an
  envelope of a type we do not handle (Slack adds types), or a payload bolt would trip over
  (the checks of bot/payloads.py, as in HTTP mode), would go unacked and be re-sent by Slack.
  Those are acked empty and logged (type and envelope id only, never the payload), never raised.
- The connection's state is kept for the liveness probe (bot/health.py): connected, or since
  when it has been down (the SDK reconnects by itself after a dropped link or a `disconnect`).
- Each replica of the bot holds a link of its own (Slack allows ten per app, and spreads the
  envelopes over them); nothing here assumes it is the only one. A stopping replica `finish`es
  the envelopes it is handling (their acks go back on this link) before it `stop`s: an envelope
  Slack sends in the moment between the two is not acked, and Slack sends it again on another
  replica's link.
- The link is read by `SteadyClient`, slack_sdk's built-in client with one race taken out: its
  reading thread, each time it began a read, cleared the end mark of the session it found —
  which could be one being retired by a reconnect (every refresh Slack asks for) or a close.
  That read then waited forever on a dead link while the new link went unread: no envelope
  acked, though the client said it was connected. Closing never hangs either (`close_client`).
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from slack_bolt import App
from slack_bolt.adapter.socket_mode.internals import run_bolt_app, send_response
from slack_sdk import WebClient
from slack_sdk.socket_mode.builtin import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from bot import payloads

log = logging.getLogger(__name__)

HANDLED_TYPES = frozenset({"slash_commands", "interactive", "events_api"})
PING_INTERVAL = 10.0  # seconds between the client's pings; a silent link is replaced after 4
CLOSE_SECONDS = 5.0  # the most a close waits for the SDK's reading thread


class SocketModeBot:
    """Runs `app` over Socket Mode; `connect()` returns once the first link is open."""

    def __init__(
        self,
        app: App,
        app_token: str,
        web_client: WebClient,
        *,
        ping_interval: float = PING_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._down_since: float | None = clock()  # not connected yet
        self._handling = 0  # envelopes being handled now
        self._handled = threading.Condition()
        self.app = app
        self._client = SteadyClient(
            app_token=app_token,
            logger=app.logger,
            web_client=web_client,
            proxy=web_client.proxy,
            ping_interval=ping_interval,
        )
        client = self._client
        # bolt's own listener is replaced by ours, which acks everything (see the module doc)
        client.socket_mode_request_listeners[:] = [self._handle]  # type: ignore[list-item]
        client.message_listeners.append(self._raw)  # type: ignore[arg-type]
        client.on_close_listeners.append(lambda code, reason: self._mark_down())
        client.on_error_listeners.append(lambda error: self._mark_down())

    @property
    def client(self) -> SocketModeClient:
        return self._client

    def connect(self) -> SocketModeBot:
        self._client.connect()
        self._observe()
        return self

    def finish(self, timeout: float) -> bool:
        """Wait until no envelope is being handled (up to `timeout` s); False if some still
        were."""
        with self._handled:
            return self._handled.wait_for(lambda: self._handling == 0, timeout)

    def stop(self) -> None:
        self.close()

    def close(self) -> None:
        close_client(self.client)
        self._mark_down()

    def down_for(self) -> float | None:
        """Seconds the link has been down, None while it is up."""
        self._observe()
        with self._lock:
            return None if self._down_since is None else self._clock() - self._down_since

    def _observe(self) -> None:
        if self.client.is_connected():
            with self._lock:
                self._down_since = None
        else:
            self._mark_down()

    def _mark_down(self) -> None:
        with self._lock:
            if self._down_since is None:
                self._down_since = self._clock()

    def _handle(self, client: SocketModeClient, request: SocketModeRequest) -> None:
        with self._handled:
            self._handling += 1
        try:
            self._ack_and_run(client, request)
        finally:
            with self._handled:
                self._handling -= 1
                self._handled.notify_all()

    def _ack_and_run(self, client: SocketModeClient, request: SocketModeRequest) -> None:
        self._observe()
        ack = SocketModeResponse(envelope_id=request.envelope_id)
        if request.type not in HANDLED_TYPES:
            log.warning(
                "Socket Mode: acked an envelope of unknown type %r (envelope %s), not handled",
                request.type,
                request.envelope_id,
            )
            client.send_socket_mode_response(ack)
            return
        problem = payloads.problem(request.payload)
        if problem is not None:
            log.warning(
                "Socket Mode: acked a malformed %s envelope (%s), not handled: %s",
                request.type,
                request.envelope_id,
                problem,
            )
            client.send_socket_mode_response(ack)
            return
        started = time.time()
        try:
            response = run_bolt_app(self.app, request)
        except Exception as e:  # bolt catches its listeners' errors; anything else is ours
            log.error(
                "Socket Mode: envelope %s (%s) failed: %s",
                request.envelope_id,
                request.type,
                type(e).__name__,
            )
            client.send_socket_mode_response(ack)
            return
        if response.status == 200:
            send_response(client, request, response, started)
        else:  # nothing listens for it (404) or bolt failed (500): Slack re-sending won't help
            log.info(
                "Socket Mode: acked envelope %s (%s) that bolt answered %d",
                request.envelope_id,
                request.type,
                response.status,
            )
            client.send_socket_mode_response(ack)

    def _raw(self, client: SocketModeClient, message: dict[str, Any], raw: str) -> None:
        """An envelope the SDK cannot turn into a request (no payload, or one that is neither
        an object nor text) is dropped by it unacked: ack it here."""
        envelope_id = message.get("envelope_id")
        if not isinstance(envelope_id, str) or not envelope_id:
            return
        if isinstance(message.get("payload"), dict | str) and "type" in message:
            return  # a request: _handle acks it
        log.warning(
            "Socket Mode: acked a malformed envelope %s (type %r), not handled",
            envelope_id,
            message.get("type"),
        )
        client.send_socket_mode_response(SocketModeResponse(envelope_id=envelope_id))


class SteadyClient(SocketModeClient):
    """slack_sdk's built-in Socket Mode client (3.48), its reading thread's round changed.

    The SDK's thread, each time it begins reading the current session, sets that session's
    `terminated` back to False. `connect()` (a reconnect: Slack's `refresh_requested`, a dropped
    link) marks the old session terminated and closes it only then; a thread beginning a read in
    between cleared the mark and read the old link, which then closed: the read waited forever,
    and the new link was never read (the client still said connected). A close the same. Here
    a session marked terminated stays so: the thread reads a session only while it is active
    and its state unmarked, and a retired one's read ends."""

    def _run_current_session(self) -> None:
        state, session = self.current_session_state, self.current_session
        if session is None or state.terminated or not session.is_active():
            return
        try:
            session.run_until_completion(state)
        except Exception as e:  # the SDK logs and carries on here too: the monitor reconnects
            log.error("Socket Mode: reading the link failed: %s", type(e).__name__)


def close_client(client: SocketModeClient, timeout: float = CLOSE_SECONDS) -> None:
    """Close slack_sdk's built-in client at once and for sure.

    Its `close()` joins the thread that reads the link, with no timeout, and that thread's read
    ends only when the session's state says `terminated`. But each time that thread begins a
    read of a live session it sets the flag back to False (slack_sdk 3.48,
    `_run_current_session`): a close that lands between two reads — on a busy machine the gap
    is long enough; a CI run hung on it — sets the flag, the thread clears it, the link then
    goes, and the thread waits on a dead link forever. So: the thread may begin no further read
    (its runner's event), the flag is held set and the socket shut down (which also wakes a read
    sitting in recv, otherwise for up to 3 s) until the thread ends, and only then the SDK's own
    close, which finds it gone. A thread still there after `timeout` is left behind (a daemon)
    rather than waited for."""
    client.auto_reconnect_enabled = False
    runner = client.current_session_runner
    runner.event.set()  # no read after the one under way
    deadline = time.monotonic() + timeout
    while runner.is_alive() and time.monotonic() < deadline:
        client.current_session_state.terminated = True
        sock = getattr(client.current_session, "sock", None)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already gone
        runner.thread.join(0.05)
    if runner.is_alive():
        log.warning("Socket Mode: the SDK's reading thread did not end; left behind")
        runner.thread = None  # type: ignore[assignment]  # else the SDK's close joins it
    client.close()
