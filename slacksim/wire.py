"""Reading an HTTP request to the simulator: its body (sized or chunked), its form or JSON
parameters, and the bearer token it carries."""

from __future__ import annotations

import json
from email.message import Message
from io import BufferedIOBase
from urllib.parse import parse_qsl

from slacksim.workspace import Json


def read_body(rfile: BufferedIOBase, headers: Message) -> bytes:
    if headers.get("Transfer-Encoding", "").lower() == "chunked":
        chunks = []
        while (size := int(rfile.readline().split(b";")[0].strip() or b"0", 16)) > 0:
            chunks.append(rfile.read(size))
            rfile.readline()
        while rfile.readline().strip():  # trailers
            pass
        return b"".join(chunks)
    length = int(headers.get("Content-Length") or 0)
    return rfile.read(length) if length else b""


def parse_body(body: bytes, content_type: str) -> Json:
    if not body:
        return {}
    text = body.decode("utf-8", errors="replace")
    if content_type.split(";")[0].strip().lower() == "application/json":
        try:
            parsed = json.loads(text)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return dict(parse_qsl(text, keep_blank_values=True))


def bearer(headers: dict[str, str]) -> str | None:
    auth = headers.get("authorization", "")
    return auth[7:].strip() or None if auth.lower().startswith("bearer ") else None
