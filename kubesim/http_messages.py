"""What passes between the HTTP server and the API: a request, an answer, a watch stream."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesim.entries import Watcher
from kubesim.errors import ApiError
from kubesim.resources import Resource

JSON = "application/json"


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: Mapping[str, str]  # lower-case names
    body: bytes = b""


@dataclass
class WatchStream:
    watcher: Watcher
    timeout: float
    error: dict[str, Any] | None = None  # an ERROR event to send first, then end


@dataclass
class Response:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    stream: WatchStream | None = None


def json_response(status: int, body: Any) -> Response:
    return Response(status, json.dumps(body, separators=(",", ":")).encode())


def error_response(error: ApiError) -> Response:
    resp = json_response(error.code, error.status())
    resp.headers.update(error.headers())
    return resp


def success_status(res: Resource, name: str, uid: str) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name}
    if res.group:
        details["group"] = res.group
    details.update(kind=res.name, uid=uid)
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    }
