"""How a file lives in an Ignition config: a `data:` URL (RFC 2397) inside a storage entry.

- `file_entry(path, contents, mode)`: a file entry, base64 `data:` URL, `overwrite: true`.
- `file_contents(config, path)`: the decoded bytes of one file of a config, or None.
- `data_url(data)` / `decode_data_url(url)`: the two directions of a `data:` URL (decoding
  raises ValueError when malformed).
"""

from __future__ import annotations

import base64
import binascii
import gzip
import re
from typing import Any
from urllib.parse import unquote_to_bytes

_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


def file_entry(path: str, contents: str | bytes, mode: int) -> dict[str, Any]:
    data = contents.encode() if isinstance(contents, str) else contents
    return {
        "path": path,
        "mode": mode,
        "overwrite": True,
        "contents": {"source": data_url(data)},
    }


def file_contents(config: dict[str, Any], path: str) -> bytes | None:
    """The decoded contents of one file of a config (data URLs only), or None."""
    for entry in (config.get("storage") or {}).get("files") or []:
        if entry.get("path") != path:
            continue
        contents = entry.get("contents") or {}
        source = contents.get("source")
        if not isinstance(source, str) or not source.startswith("data:"):
            return None
        data = decode_data_url(source)
        return gzip.decompress(data) if contents.get("compression") == "gzip" else data
    return None


def data_url(data: bytes) -> str:
    return "data:;base64," + base64.b64encode(data).decode("ascii")


def decode_data_url(url: str) -> bytes:
    """The payload of `data:[<mediatype>][;base64],<data>`."""
    if not url.startswith("data:"):
        raise ValueError("not a data URL")
    header, comma, payload = url[5:].partition(",")
    if not comma:
        raise ValueError("a data URL needs a ',' before its data")
    if _BAD_PERCENT.search(payload):
        raise ValueError("bad percent-encoding")
    raw = unquote_to_bytes(payload)
    if header.lower().endswith(";base64"):
        try:
            return base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError) as e:
            raise ValueError(f"bad base64 ({e})") from None
    return raw
