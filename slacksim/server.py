"""SlackSim: a fake Slack Web API served over real HTTP on 127.0.0.1.

Point a real client at it::

    with SlackSim() as sim:
        client = WebClient(token=sim.token, base_url=sim.api_url)   # sim.url + "/api/"
        client.chat_postMessage(channel="C1", text="hi")
        assert sim.calls_to("chat.postMessage")[0].params["text"] == "hi"

Besides `/api/<method>` it serves `POST /upload/<file_id>` (the upload_url handed out by
files.getUploadURLExternal), `POST /response/<id>` (a slash command or action
`response_url`) and `GET /link/?ticket=…`, the Socket Mode WebSocket (slacksim.socket_mode, driven
through `sim.socket`). Every call is recorded; every change wakes `wait_for`.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlsplit

from slacksim.faults import Faults
from slacksim.files import receive_upload
from slacksim.holds import Holds
from slacksim.methods import METHODS
from slacksim.params import decode_params
from slacksim.response_url import respond
from slacksim.socket_mode import APP_TOKEN, PATH, SocketMode, refuse_app_token, serve_upgrade
from slacksim.tiers import Tiers
from slacksim.wire import bearer, parse_body, read_body
from slacksim.workspace import Json, ResponseTarget, SlackError, Upload, Workspace

T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """One request to `/api/<method>`, as received and as answered.

    params: query and body parameters merged (form or JSON body); JSON-text parameters such as
        `blocks` are decoded. headers: request headers with lower-case names.
    at: arrival time on the sim's clock (time.monotonic by default).
    token: the bearer token (or `token` parameter) sent, None if none.
    status, response: the HTTP status and JSON body answered.
    answered: when the sim acted on it and answered (a post: when it was stored), same clock.
    """

    method: str
    params: dict[str, Any]
    headers: dict[str, str]
    at: float
    token: str | None = None
    status: int = 200
    response: dict[str, Any] = field(default_factory=dict)
    answered: float = 0.0


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # listen backlog; the stdlib default of 5 resets bursts
    daemon_threads = True
    sim: SlackSim


class SlackSim:
    """A recording fake of the Slack Web API. Use as a context manager, or start()/stop()."""

    def __init__(
        self,
        *,
        token: str = "xoxb-test",
        app_token: str = APP_TOKEN,
        port: int = 0,
        clock: Callable[[], float] = time.monotonic,
        tiers: Tiers | None = None,
        **workspace: Any,
    ) -> None:
        """token: the only bot token accepted; app_token: the only app-level token (Socket
        Mode's apps.connections.open, see `sim.socket`). port: 0 picks a free one.
        clock: stamps Call.at.
        tiers: the rate limits enforced (slacksim.tiers; Slack's own by default, `Tiers(speed)`
        faster, `Tiers.off()` none). workspace: Workspace settings (team_id, ts_base, ...)."""
        self.token = token
        self.app_token = app_token
        self.faults = Faults()
        self.holds = Holds()
        self.tiers = tiers if tiers is not None else Tiers()
        self._clock = clock
        self._cond = threading.Condition(threading.RLock())
        self._calls: list[Call] = []
        self._stopping = threading.Event()
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.sim = self
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self.api_url = self.url + "/api/"
        self.workspace = Workspace(url=self.url, **workspace)
        self.socket = SocketMode(self.workspace, self._cond)
        self._thread: threading.Thread | None = None

    # ---- lifecycle ---------------------------------------------------------------------------

    def start(self) -> SlackSim:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.02},  # how long stop() may wait; stdlib default 0.5 s
                name="slacksim",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self.socket.close_all()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> SlackSim:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def reset(self) -> None:
        """Forget calls, messages, uploads, responses and faults (users/usergroups stay)."""
        with self._cond:
            self._calls.clear()
            self.workspace.reset()
            self.faults.clear()
            self.tiers.reset()

    # ---- configuration -----------------------------------------------------------------------

    @property
    def usergroups(self) -> dict[str, list[str]]:
        """Group id -> member ids for usergroups.users.list: `sim.usergroups["S1"] = ["U1"]`."""
        return self.workspace.usergroups

    @property
    def users(self) -> dict[str, Json]:
        """User id -> fields overlaid on the synthesised users.info user."""
        return self.workspace.users

    def response_url(
        self,
        response_id: str,
        *,
        channel: str | None = None,
        user: str | None = None,
        message_ts: str | None = None,
        thread_ts: str | None = None,
    ) -> str:
        """A response_url on this server. Say where it came from to make responses visible:
        in_channel responses post to `channel`, ephemeral ones reach `ephemerals(user)`,
        replace_original/delete_original act on the message `message_ts` in `channel`."""
        with self._cond:
            target = ResponseTarget(channel, user, message_ts, thread_ts)
            self.workspace.response_targets[response_id] = target
        return f"{self.url}/response/{response_id}"

    # ---- what was received -------------------------------------------------------------------

    @property
    def calls(self) -> list[Call]:
        with self._cond:
            return list(self._calls)

    def calls_to(self, method: str) -> list[Call]:
        with self._cond:
            return [c for c in self._calls if c.method == method]

    def messages(self, channel: str) -> dict[str, Json]:
        """Top-level messages of `channel` by ts, oldest first, with updates applied."""
        with self._cond:
            return self.workspace.top_level(channel)

    def thread(self, channel: str, ts: str) -> list[Json]:
        """Replies to the message `ts` of `channel`, oldest first (the parent excluded)."""
        with self._cond:
            return self.workspace.replies(channel, ts)

    def notifications(self, channel: str, thread_ts: str | None = None) -> int:
        """How many messages notified the people of `channel` (of the thread `thread_ts` only,
        when given): every new message does (chat.postMessage, a file shared, an in_channel
        response); an edit (chat.update) does not, even one that adds a mention: Slack's
        clients get it as a `message_changed` event marked `hidden`, a change to a message
        already seen rather than a new one
        (https://docs.slack.dev/reference/events/message/message_changed)."""
        with self._cond:
            return self.workspace.notifications(channel, thread_ts)

    def ephemerals(self, user: str) -> list[Json]:
        """Ephemeral messages shown to `user` (chat.postEphemeral and bound response_urls)."""
        with self._cond:
            return copy.deepcopy(self.workspace.ephemerals.get(user, []))

    @property
    def uploads(self) -> list[Upload]:
        with self._cond:
            return list(self.workspace.uploads.values())

    @property
    def views(self) -> list[Json]:
        """Views opened with views.open, as answered."""
        with self._cond:
            return copy.deepcopy(self.workspace.views)

    def responses(self, response_id: str) -> list[Json]:
        """JSON bodies accepted at `/response/<response_id>`, in order."""
        with self._cond:
            return copy.deepcopy(self.workspace.responses.get(response_id, []))

    @property
    def response_urls(self) -> dict[str, list[Json]]:
        """Every response id that received a body -> the bodies accepted."""
        with self._cond:
            return copy.deepcopy(self.workspace.responses)

    def wait_for(self, predicate: Callable[[], T], timeout: float = 60.0) -> T:
        """Block until `predicate()` is truthy, re-checking after every request the sim handles.

        Returns the truthy value; raises TimeoutError (listing the calls seen) after `timeout`
        seconds. The predicate runs under the sim's lock and may use any query above.
        """
        with self._cond:
            result = self._cond.wait_for(predicate, timeout)
            if not result:
                seen = ", ".join(c.method for c in self._calls) or "none"
                raise TimeoutError(f"condition not met within {timeout}s; calls seen: {seen}")
            return result

    def wait_for_calls(self, method: str, count: int = 1, timeout: float = 60.0) -> list[Call]:
        """Wait until `method` was called at least `count` times; returns those calls."""

        def enough() -> list[Call]:
            calls = self.calls_to(method)
            return calls if len(calls) >= count else []

        return self.wait_for(enough, timeout)

    # ---- request handling (called from server threads) ---------------------------------------

    def _api(
        self, method: str, params: Json, headers: dict[str, str], at: float
    ) -> tuple[Call, dict[str, str]] | None:
        """Answer one Web API call; returns it as recorded and any extra response headers, or
        None when a hold dropped it (nothing done, nothing answered)."""
        token = bearer(headers) or params.get("token")
        refusal = self._refusal(method, token)
        if not refusal and not self.holds.keep(method, params, self._stopping):
            return None
        wait = None if refusal else self.tiers.admit(method, params.get("channel"))
        fault = None if refusal or wait is not None else self.faults.take(method)
        if fault is not None and fault.latency:
            self._stopping.wait(fault.latency)
        status, extra = 200, {}
        with self._cond:
            if refusal:
                body: Json = {"ok": False, "error": refusal}
            elif wait is not None:
                status, body = 429, {"ok": False, "error": "ratelimited"}
                extra = {"Retry-After": self.tiers.retry_after(wait)}
            elif fault is not None and fault.changes_answer:
                status, body, extra = fault.status, fault.body(), fault.headers()
            else:
                try:
                    body = METHODS[method](self.workspace, params)
                except SlackError as e:
                    body = {"ok": False, "error": e.code}
            call = Call(method, params, headers, at, token, status, body, self._clock())
            self._calls.append(call)
            self._cond.notify_all()
        return call, extra

    def _refusal(self, method: str, token: str | None) -> str | None:
        """The error Slack answers before looking at the call at all, if any."""
        if method not in METHODS:
            return "unknown_method"
        if not token:
            return "not_authed"
        if method == "apps.connections.open" or token == self.app_token:
            return refuse_app_token(method, token, self.app_token, self.token)
        if token != self.token:
            return "invalid_auth"
        return None

    def _upload(self, file_id: str, content: bytes) -> bool:
        with self._cond:
            accepted = receive_upload(self.workspace, file_id, content)
            self._cond.notify_all()
            return accepted

    def _respond(self, response_id: str, body: Json) -> tuple[int, str]:
        with self._cond:
            answer = respond(self.workspace, response_id, body)
            self._cond.notify_all()
            return answer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: tests and benchmarks read calls, not access logs

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        at = self.server.sim._clock()
        body = read_body(self.rfile, self.headers)
        split = urlsplit(self.path)
        parts = split.path.strip("/").split("/")
        headers = {k.lower(): v for k, v in self.headers.items()}
        sim = self.server.sim
        if split.path == PATH and self.command == "GET":
            serve_upgrade(self, sim.socket, dict(parse_qsl(split.query)).get("ticket"), headers)
        elif len(parts) == 2 and parts[0] == "api":
            params = dict(parse_qsl(split.query, keep_blank_values=True))
            params.update(parse_body(body, headers.get("content-type", "")))
            answered = sim._api(parts[1], decode_params(params), headers, at)
            if answered is None:
                self.close_connection = True  # dropped by a hold: no answer at all
                return
            call, extra = answered
            self._send(call.status, json.dumps(call.response), "application/json", extra)
        elif len(parts) == 2 and parts[0] == "upload" and self.command == "POST":
            if sim._upload(parts[1], body):
                self._send(200, f"OK - {len(body)}", "text/plain")
            else:
                self._send(404, "file_not_found", "text/plain")
        elif len(parts) == 2 and parts[0] == "response" and self.command == "POST":
            try:
                payload = json.loads(body or b"null")
            except ValueError:
                payload = None
            if not isinstance(payload, dict):
                self._send(400, "invalid_payload", "text/html")
            else:
                status, text = sim._respond(parts[1], payload)
                self._send(status, text, "text/html")
        else:
            self._send(404, "not_found", "text/plain")

    def _send(
        self, status: int, text: str, content_type: str, extra: dict[str, str] | None = None
    ) -> None:
        data = text.encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", f"{content_type}; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client stopped waiting (its timeout): acted on
