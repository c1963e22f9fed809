"""Request identifiers: `req-` and 8 lowercase hex digits."""

from __future__ import annotations

import re
import secrets

REQUEST_ID = re.compile(r"^req-[0-9a-f]{8}$")


def new_request_id() -> str:
    return f"req-{secrets.token_hex(4)}"


def is_request_id(text: str) -> bool:
    return bool(REQUEST_ID.match(text))
