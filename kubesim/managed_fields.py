"""metadata.managedFields as the API server keeps them for create, update and patch: one entry
per field manager, operation and subresource, naming who wrote which fields.

The manager is the request's `fieldManager`, or, when it names none, the first part of its
User-Agent (the official Python client's `OpenAPI-Generator/37.0.2/python` gives
`OpenAPI-Generator`), as the real server's `prefixFromUserAgent` does. `fieldsV1` holds the
fields the request's body named (`f:<name>` per key, lists as leaves): the real server computes
the set a manager owns from the structured merge diff, which is not modelled; a client reads the
manager, the operation and the time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubesim.http_messages import Request

SERVER_SET = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")


@dataclass(frozen=True)
class Write:
    """Who wrote (the field manager), the fields their request's body named (`f:<name>` per
    key, as the body was sent: taken before the handler fills in defaults), to which
    subresource."""

    manager: str
    fields: dict[str, Any]
    subresource: str = ""


def write_of(req: Request, body: Any, subresource: str = "") -> Write:
    return Write(manager(req), _fields(body, top=True), subresource)


def manager(req: Request) -> str:
    named = req.query.get("fieldManager")
    if named:
        return named
    agent = req.headers.get("user-agent", "")
    return agent.split("/")[0] or "unknown"


def record(
    obj: dict[str, Any],
    previous: list[dict[str, Any]] | None,
    write: Write,
    api_version: str,
    now: str,
) -> None:
    """Set `obj`'s managedFields: `previous` with the writer's entry (operation Update) for its
    subresource made to include the fields its body named, at `now`."""
    who, subresource = write.manager, write.subresource
    entries = [dict(e) for e in previous or [] if isinstance(e, dict)]
    mine = next(
        (
            e
            for e in entries
            if e.get("manager") == who
            and e.get("operation") == "Update"
            and e.get("subresource", "") == subresource
        ),
        None,
    )
    if mine is None:
        mine = {"manager": who, "operation": "Update"}
        entries.append(mine)
    mine.update(apiVersion=api_version, time=now, fieldsType="FieldsV1")
    mine["fieldsV1"] = _merged(mine.get("fieldsV1") or {}, write.fields)
    if subresource:
        mine["subresource"] = subresource
    obj.setdefault("metadata", {})["managedFields"] = entries


def _fields(value: Any, top: bool = False) -> dict[str, Any]:
    if not isinstance(value, dict):
        return {}
    out = {}
    for key, child in value.items():
        if top and key in ("apiVersion", "kind"):
            continue
        if key in SERVER_SET or (top and key == "status" and not child):
            continue
        if key == "metadata" and isinstance(child, dict):
            child = {k: v for k, v in child.items() if k not in ("name", "namespace")}
            if not child:
                continue
        out[f"f:{key}"] = _fields(child)
    return out


def _merged(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    merged = dict(old)
    for key, value in new.items():
        merged[key] = _merged(merged.get(key) or {}, value) if value else merged.get(key, {})
    return merged
