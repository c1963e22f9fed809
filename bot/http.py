"""The bot as a WSGI application: `POST /slack/events` into bolt, `GET /healthz` for probes.

Bolt verifies the signature and timestamp of every request (401 otherwise). A body bolt cannot
parse, or a payload of ours missing what bolt itself reads (`actions`, `user`), is answered
here: 401 when its signature is wrong, 400 when it is signed but malformed — never a traceback.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import time
from collections.abc import Callable, Iterable
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from slack_bolt import App
from slack_bolt.request import BoltRequest
from slack_bolt.response import BoltResponse

from bot import payloads

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
MAX_BODY = 1 << 20  # Slack's payloads are a few kilobytes
MAX_AGE = 5 * 60  # seconds a request's timestamp may be off, as bolt and Slack's docs have it


class SlackWsgi:
    def __init__(
        self,
        app: App,
        signing_secret: str,
        *,
        healthy: Callable[[], bool] = lambda: True,
        ready: Callable[[], str | None] = lambda: None,
    ) -> None:
        """healthy: is the relay running. ready: why requests cannot be taken now (the state
        store does not answer), None when they can. /healthz is 200 only when both agree."""
        self.app = app
        self.secret = signing_secret.encode()
        self.healthy = healthy
        self.ready = ready

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        method = environ.get("REQUEST_METHOD", "GET")
        path = environ.get("PATH_INFO", "")
        if path == HEALTH_PATH and method in ("GET", "HEAD"):
            problem = "relay stopped" if not self.healthy() else self.ready()
            return _send(start_response, 503 if problem else 200, problem or "ok")
        if path != EVENTS_PATH:
            return _send(start_response, 404, "not found")
        if method != "POST":
            return _send(start_response, 405, "use POST", [("Allow", "POST")])
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return _send(start_response, 400, "bad Content-Length")
        if length > MAX_BODY:
            return _send(start_response, 413, "body too large")
        raw = environ["wsgi.input"].read(length) if length > 0 else b""
        headers = _headers(environ)
        try:
            request = BoltRequest(
                body=raw.decode("utf-8"),
                query=environ.get("QUERY_STRING", ""),
                headers=headers,  # type: ignore[arg-type]
            )
        except Exception as e:  # undecodable or unparsable: answer, do not crash
            if not self._signed(raw, headers):
                return _send(start_response, 401, "")
            log.warning("refused an unparsable request: %s", type(e).__name__)
            return _send(start_response, 400, "malformed body")
        problem = payloads.problem(request.body)
        if problem is not None:  # bolt itself would trip over it (e.g. an empty `actions`)
            if not self._signed(raw, headers):
                return _send(start_response, 401, "")
            log.warning("refused a malformed request: %s", problem)
            return _send(start_response, 400, problem)
        response = self.app.dispatch(request)
        return _reply(start_response, response)

    def _signed(self, raw: bytes, headers: dict[str, list[str]]) -> bool:
        """Slack's signature over the raw bytes, which need not be UTF-8 here (the SDK's
        verifier decodes them first, and raises on bytes that are not)."""
        timestamp = (headers.get("x-slack-request-timestamp") or [""])[0]
        signature = (headers.get("x-slack-signature") or [""])[0]
        if not timestamp.isdigit() or abs(time.time() - int(timestamp)) > MAX_AGE:
            return False
        base = b"v0:" + timestamp.encode() + b":" + raw
        expected = "v0=" + hmac.new(self.secret, base, hashlib.sha256).hexdigest()
        return hmac.compare_digest(expected.encode(), signature.encode("latin-1", "replace"))


def _headers(environ: dict[str, Any]) -> dict[str, list[str]]:
    headers: dict[str, list[str]] = {}
    for key, value in environ.items():
        if key.startswith("HTTP_"):
            name = key[5:].replace("_", "-").lower()
        elif key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            name = key.replace("_", "-").lower()
        else:
            continue
        headers.setdefault(name, []).append(str(value))
    return headers


def _status(code: int) -> str:
    try:
        return f"{code} {HTTPStatus(code).phrase}"
    except ValueError:
        return f"{code} Unknown"


def _send(
    start_response: StartResponse,
    code: int,
    text: str,
    extra: list[tuple[str, str]] | None = None,
) -> list[bytes]:
    data = text.encode()
    headers = [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(data)))]
    start_response(_status(code), headers + (extra or []))
    return [data]


def _reply(start_response: StartResponse, response: BoltResponse) -> list[bytes]:
    data = (response.body or "").encode()
    headers = [
        (name, value)
        for name, values in response.headers.items()
        if name.lower() != "content-length"
        for value in values
    ]
    headers.append(("Content-Length", str(len(data))))
    start_response(_status(response.status), headers)
    return [data]
