"""`ChannelPage`: the page and its small JSON API, served over HTTP on loopback.

    GET  /                      the page (static/: index.html, app.js, mrkdwn.js, follow.js,
                                style.css, and emoji.json: the emoji codes it draws)
    GET  /api/people            who the page can act as
    GET  /api/state?user=U…     the channel as U… sees it (slacksim.web.snapshot)
    POST /api/command           {"user": "U…", "text": "a-w-1 from clusterA to clusterB"}
    POST /api/click             {"user": "U…", "ts": "…", "action": {"action_id": …, "value": …}}

The POSTs take JSON only (a page of another site cannot send that without a CORS preflight this
server never grants) and answer what the app answered: {"status": 200} or an error. The page
holds no state the server needs: a closed tab leaves the app and the sim as they were.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from typing import Any
from urllib.parse import parse_qs, urlsplit

from slacksim.server import SlackSim
from slacksim.web.gateway import Gateway, Person
from slacksim.web.snapshot import snapshot

STATIC = {
    "/": ("index.html", "text/html"),
    "/app.js": ("app.js", "text/javascript"),
    "/mrkdwn.js": ("mrkdwn.js", "text/javascript"),
    "/follow.js": ("follow.js", "text/javascript"),
    "/emoji.json": ("emoji.json", "application/json"),
    "/style.css": ("style.css", "text/css"),
}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    page: ChannelPage


class ChannelPage:
    """A Slack channel in a browser, for the app at `events_url` (signed with `secret`)."""

    def __init__(
        self,
        sim: SlackSim,
        events_url: str,
        secret: str,
        people: list[Person],
        *,
        port: int = 0,
        title: str = "ops",
    ) -> None:
        self.sim, self.people, self.title = sim, people, title
        self.gateway = Gateway(sim, events_url, secret, people)
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.page = self
        self.url = f"http://127.0.0.1:{self._server.server_port}/"
        self._thread: threading.Thread | None = None

    def start(self) -> ChannelPage:
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="slacksim-web", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()

    def __enter__(self) -> ChannelPage:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def state(self, viewer: str) -> dict[str, Any]:
        names = {p.user_id: p.name for p in self.people}
        shown = snapshot(self.sim, self.gateway.channel, viewer, names)
        shown["title"] = self.title
        shown["command"] = self.gateway.command
        shown["personas"] = self.personas()
        return shown

    def personas(self) -> list[dict[str, str]]:
        return [{"id": p.user_id, "name": p.name, "part": p.part} for p in self.people]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        split = urlsplit(self.path)
        page = self.server.page
        if split.path in STATIC:
            name, kind = STATIC[split.path]
            text = files("slacksim.web").joinpath("static", name).read_text(encoding="utf-8")
            self._send(200, text, kind)
        elif split.path == "/api/people":
            self._json(200, {"personas": page.personas()})
        elif split.path == "/api/state":
            viewer = (parse_qs(split.query).get("user") or [""])[0]
            if viewer not in page.gateway.people:
                self._json(404, {"error": f"no such person: {viewer!r}"})
            else:
                self._json(200, page.state(viewer))
        else:
            self._json(404, {"error": "not_found"})

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/json":
            self._json(415, {"error": "send application/json"})
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            user = str(body["user"])
            gateway = self.server.page.gateway
            if path == "/api/command":
                delivery = gateway.run_command(user, str(body.get("text") or ""))
            elif path == "/api/click":
                delivery = gateway.click(user, str(body["ts"]), dict(body["action"]))
            else:
                self._json(404, {"error": "not_found"})
                return
        except (ValueError, KeyError, LookupError, TypeError) as e:
            self._json(400, {"error": f"bad request: {e!r}"})
            return
        except OSError as e:  # the app did not answer
            self._json(502, {"error": f"the app did not answer: {e}"})
            return
        self._json(200, {"status": delivery.status})

    def _json(self, status: int, body: dict[str, Any]) -> None:
        self._send(status, json.dumps(body), "application/json")

    def _send(self, status: int, text: str, kind: str) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)
