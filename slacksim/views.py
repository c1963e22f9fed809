"""views.open: the modals the bot opens, kept as Slack answers them."""

from __future__ import annotations

import copy

from slacksim.workspace import Json, SlackError, Workspace


def views_open(ws: Workspace, params: Json) -> Json:
    view = params.get("view")
    if not params.get("trigger_id") or not isinstance(view, dict):
        raise SlackError("invalid_arguments")
    view_id = ws.next_id("V")
    opened: Json = {
        "id": view_id,
        "team_id": ws.team_id,
        "type": view.get("type", "modal"),
        "title": view.get("title"),
        "close": view.get("close"),
        "submit": view.get("submit"),
        "blocks": view.get("blocks", []),
        "private_metadata": view.get("private_metadata", ""),
        "callback_id": view.get("callback_id", ""),
        "state": {"values": {}},
        "hash": f"{ws.ts_base}.{ws.seq:08x}",
        "clear_on_close": bool(view.get("clear_on_close", False)),
        "notify_on_close": bool(view.get("notify_on_close", False)),
        "root_view_id": view_id,
        "previous_view_id": None,
        "app_id": ws.app_id,
        "external_id": view.get("external_id", ""),
        "bot_id": ws.bot_id,
        "trigger_id": params["trigger_id"],
    }
    ws.views.append(opened)
    return {"ok": True, "view": copy.deepcopy(opened)}
