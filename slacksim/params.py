"""Reading a Web API call's parameters: JSON text inside form bodies, required values, and
id lists (a JSON list or comma-separated text)."""

from __future__ import annotations

import contextlib
import json

from slacksim.workspace import Json, SlackError

# Parameters Slack accepts as JSON text inside form-encoded bodies; decoded on receipt.
JSON_PARAMS = frozenset({"blocks", "attachments", "files", "view", "metadata"})


def decode_params(params: Json) -> Json:
    """Decode the JSON-text parameters (`blocks=[...]` in a form body) into Python values."""
    decoded = dict(params)
    for key in JSON_PARAMS & decoded.keys():
        value = decoded[key]
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                decoded[key] = json.loads(value)
    return decoded


def required(params: Json, key: str, error: str) -> str:
    value = params.get(key)
    if not value or not isinstance(value, str):
        raise SlackError(error)
    return value


def id_list(value: object) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value if v]
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return []
