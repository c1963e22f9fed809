"""Socket Mode: `apps.connections.open` and the WebSocket Slack pushes envelopes over.

A Socket Mode app calls `apps.connections.open` with its app-level token (`xapp-…`) and gets a
one-use `ws://…/link/?ticket=…` URL; on connecting it receives `hello`, then envelopes::

    {"envelope_id": "…", "type": "slash_commands" | "interactive" | "events_api",
     "payload": {…}, "accepts_response_payload": true}

and must ack each with `{"envelope_id": "…"}` (plus `"payload"` where responses are accepted).
Slack asks a client to move with `{"type": "disconnect", "reason": "refresh_requested" |
"warning" | "link_disabled"}` and may also just drop the connection
(https://docs.slack.dev/apis/events-api/using-socket-mode).

The WebSocket itself (RFC 6455: handshake, framing, ping/pong, close) is written here on the
stdlib, served by SlackSim's own HTTP server, so neither the fake nor the product needs a
WebSocket package. Tests drive it through `sim.socket`::

    envelope = sim.socket.slash_command(text="a-w-1 from clusterA to clusterB")
    ack = sim.socket.wait_ack(envelope)          # what the app answered
    sim.socket.disconnect("refresh_requested")   # or sim.socket.drop()
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import struct
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol

from slacksim.signing import block_actions_payload, slash_command_fields
from slacksim.workspace import Json, Workspace

APP_TOKEN = "xapp-1-A0APP00001-sim"  # the app-level token SlackSim accepts by default
PATH = "/link/"
_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455's fixed handshake suffix

OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
ENVELOPE_TYPES = ("slash_commands", "interactive", "events_api")


class Readable(Protocol):
    def read(self, n: int, /) -> bytes: ...


def apps_connections_open(workspace: Workspace, params: Json) -> Json:
    """A one-use WebSocket URL (SlackSim checked the token is the app-level one)."""
    ticket = uuid.uuid4().hex
    workspace.socket_tickets.add(ticket)
    host = workspace.url.split("://", 1)[1]
    return {"ok": True, "url": f"ws://{host}{PATH}?ticket={ticket}&app_id={workspace.app_id}"}


def accept_key(key: str) -> str:
    return base64.b64encode(hashlib.sha1((key + _GUID).encode()).digest()).decode()


def frame(opcode: int, data: bytes) -> bytes:
    """One final, unmasked frame (a server never masks)."""
    head = bytes([0x80 | opcode])
    n = len(data)
    if n < 126:
        head += bytes([n])
    elif n < 1 << 16:
        head += bytes([126]) + struct.pack("!H", n)
    else:
        head += bytes([127]) + struct.pack("!Q", n)
    return head + data


def read_frame(stream: Readable) -> tuple[bool, int, bytes]:
    """(fin, opcode, payload) of the next frame; raises EOFError when the stream ends."""

    def exactly(n: int) -> bytes:
        data = stream.read(n) if n else b""
        if len(data) < n:
            raise EOFError
        return data

    first, second = exactly(2)
    n = second & 0x7F
    if n == 126:
        (n,) = struct.unpack("!H", exactly(2))
    elif n == 127:
        (n,) = struct.unpack("!Q", exactly(8))
    mask = exactly(4) if second & 0x80 else b""
    data = exactly(n)
    if mask:
        data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
    return bool(first & 0x80), first & 0x0F, data


@dataclass
class Connection:
    """One WebSocket client. received: the text messages it sent (acks), decoded."""

    number: int
    ticket: str
    sock: socket.socket
    received: list[Json] = field(default_factory=list)
    open: bool = True
    closed_by_client: bool = False
    _send_lock: threading.Lock = field(default_factory=threading.Lock)

    def send_text(self, message: Json) -> None:
        self._send(OP_TEXT, json.dumps(message).encode())

    def _send(self, opcode: int, data: bytes) -> None:
        with self._send_lock:
            self.sock.sendall(frame(opcode, data))


class SocketMode:
    """The Socket Mode side of one SlackSim: its connections, envelopes and acks. It shares
    the sim's lock and condition, so `sim.wait_for` wakes on every change here too."""

    def __init__(
        self,
        workspace: Workspace,
        lock: threading.Condition,
    ) -> None:
        self._workspace = workspace
        self._cond = lock
        self._numbers = 0
        self.connections: list[Connection] = []
        self.envelopes: list[Json] = []  # every envelope pushed, in order
        self.acks: dict[str, Json] = {}  # envelope_id -> the client's ack
        self.unparsed: list[str] = []  # text messages that were not JSON objects

    # ---- queries ---------------------------------------------------------------------------

    @property
    def current(self) -> Connection | None:
        """The newest open connection (where envelopes go), None if none is open."""
        with self._cond:
            live = [c for c in self.connections if c.open]
            return live[-1] if live else None

    def wait_connected(self, count: int = 1, timeout: float = 60.0) -> Connection:
        """Wait until `count` connections were made in all and one is open; returns the newest."""

        def ready() -> Connection | None:
            current = self.current
            return current if current and len(self.connections) >= count else None

        return self._wait(ready, timeout, f"{count} Socket Mode connection(s)")

    def wait_ack(self, envelope_id: str, timeout: float = 60.0) -> Json:
        """The client's ack of an envelope (its `payload` too, if it sent one)."""
        return self._wait(lambda: self.acks.get(envelope_id), timeout, f"ack of {envelope_id}")

    def _wait(self, predicate: Callable[[], Any], timeout: float, what: str) -> Any:
        with self._cond:
            found = self._cond.wait_for(predicate, timeout)
            if not found:
                raise TimeoutError(f"no {what} within {timeout}s")
            return found

    # ---- Slack → app -----------------------------------------------------------------------

    def send(
        self,
        type: str,
        payload: Any,
        *,
        accepts_response_payload: bool = False,
        timeout: float = 60.0,
        **extra: Any,
    ) -> str:
        """Push one envelope to the current connection (waiting up to `timeout` for one);
        returns its envelope_id."""
        connection = self.wait_connected(timeout=timeout)
        envelope_id = str(uuid.uuid4())
        envelope = {
            "envelope_id": envelope_id,
            "type": type,
            "payload": payload,
            "accepts_response_payload": accepts_response_payload,
            **extra,
        }
        with self._cond:
            self.envelopes.append(envelope)
        connection.send_text(envelope)
        return envelope_id

    def slash_command(self, **fields: Any) -> str:
        """A slash command (the fields of `slacksim.signing.slash_command_fields`)."""
        return self.send(
            "slash_commands", slash_command_fields(**fields), accepts_response_payload=True
        )

    def block_actions(self, **fields: Any) -> str:
        """A button click (the fields of `slacksim.signing.block_actions_payload`)."""
        return self.send("interactive", block_actions_payload(**fields))

    def disconnect(self, reason: str = "refresh_requested") -> None:
        """Ask the current client to reconnect, as Slack does before it closes a link."""
        connection = self.wait_connected()
        connection.send_text(
            {"type": "disconnect", "reason": reason, "debug_info": {"host": "slacksim"}}
        )

    def drop(self) -> None:
        """Cut the current connection without a close frame (a network failure)."""
        connection = self.current
        if connection is not None:
            self._gone(connection)
            try:
                connection.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close_all(self) -> None:
        for connection in list(self.connections):
            if connection.open:
                self._gone(connection)
                try:
                    connection.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    # ---- the WebSocket (called from a server thread) ---------------------------------------

    def refusal(self, ticket: str | None, headers: dict[str, str]) -> str | None:
        """Why an upgrade request is refused, None if it is accepted (the ticket is used up)."""
        if headers.get("upgrade", "").lower() != "websocket" or "sec-websocket-key" not in headers:
            return "not a WebSocket upgrade"
        with self._cond:
            if ticket is None or ticket not in self._workspace.socket_tickets:
                return "invalid or used ticket: call apps.connections.open for a new URL"
            self._workspace.socket_tickets.discard(ticket)
        return None

    def serve(self, sock: socket.socket, stream: Readable, ticket: str) -> None:
        """Run one accepted connection until either side ends it."""
        with self._cond:
            self._numbers += 1
            connection = Connection(self._numbers, ticket, sock)
            self.connections.append(connection)
        try:
            connection.send_text(
                {
                    "type": "hello",
                    "num_connections": sum(c.open for c in self.connections),
                    "debug_info": {"host": "slacksim", "approximate_connection_time": 3600},
                    "connection_info": {"app_id": self._workspace.app_id},
                }
            )
            self._notify()
            self._receive(connection, stream)
        except (EOFError, OSError, ValueError):
            pass  # the client went away, or the connection was dropped
        finally:
            self._gone(connection)

    def _receive(self, connection: Connection, stream: Readable) -> None:
        parts: list[bytes] = []
        while connection.open:
            fin, opcode, data = read_frame(stream)
            if opcode == OP_PING:
                connection._send(OP_PONG, data)
            elif opcode == OP_CLOSE:
                connection.closed_by_client = True
                connection._send(OP_CLOSE, data[:2])
                return
            elif opcode in (OP_TEXT, OP_CONT):
                parts.append(data)
                if fin:
                    self._message(connection, b"".join(parts).decode("utf-8", "replace"))
                    parts = []

    def _message(self, connection: Connection, text: str) -> None:
        try:
            message = json.loads(text)
        except ValueError:
            message = None
        with self._cond:
            if not isinstance(message, dict):
                self.unparsed.append(text)
            else:
                connection.received.append(message)
                envelope_id = message.get("envelope_id")
                if isinstance(envelope_id, str) and envelope_id not in self.acks:
                    self.acks[envelope_id] = message
            self._cond.notify_all()

    def _gone(self, connection: Connection) -> None:
        with self._cond:
            connection.open = False
            self._cond.notify_all()

    def _notify(self) -> None:
        with self._cond:
            self._cond.notify_all()


def serve_upgrade(
    handler: BaseHTTPRequestHandler, hub: SocketMode, ticket: str | None, headers: dict[str, str]
) -> None:
    """Upgrade a `GET /link/` request to the WebSocket and serve it on the handler's thread
    until it ends; 400 when it is no upgrade or its ticket is unknown or used."""
    refusal = hub.refusal(ticket, headers)
    if refusal is not None or ticket is None:
        data = (refusal or "no ticket").encode()
        handler.close_connection = True  # as Slack does: one answer, then the link is closed
        handler.send_response(400)
        handler.send_header("Content-Type", "text/plain; charset=utf-8")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
        return
    handler.send_response(101, "Switching Protocols")
    handler.send_header("Upgrade", "websocket")
    handler.send_header("Connection", "Upgrade")
    handler.send_header("Sec-WebSocket-Accept", accept_key(headers["sec-websocket-key"]))
    handler.end_headers()
    handler.wfile.flush()
    handler.close_connection = True
    hub.serve(handler.connection, handler.rfile, ticket)


def refuse_app_token(method: str, token: str, app_token: str, bot_token: str) -> str | None:
    """Slack's answer to a token of the wrong kind: the app-level token opens connections and
    nothing else, a bot token never opens one."""
    if method == "apps.connections.open":
        if token == app_token:
            return None
        return "not_allowed_token_type" if token == bot_token else "invalid_auth"
    if token == app_token:
        return "not_allowed_token_type"
    return None
