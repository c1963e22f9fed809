"""chat.* and reactions.add: posting, changing and reacting to messages in the workspace."""

from __future__ import annotations

import copy

from slacksim.limits import refusal
from slacksim.params import required
from slacksim.workspace import Json, SlackError, Workspace


def chat_post_message(ws: Workspace, params: Json) -> Json:
    channel = required(params, "channel", "channel_not_found")
    _check_content(params)
    thread_ts = params.get("thread_ts") or None
    message = ws.bot_message(ws.next_ts(), params)
    ws.store(channel, message, thread_ts)
    return {"ok": True, "channel": channel, "ts": message["ts"], "message": copy.deepcopy(message)}


def chat_update(ws: Workspace, params: Json) -> Json:
    channel = required(params, "channel", "channel_not_found")
    ts = required(params, "ts", "message_not_found")
    message = ws.message(channel, ts)
    if not any(params.get(k) is not None for k in ("text", "blocks", "attachments")):
        raise SlackError("no_text")
    _check_content(params)
    if params.get("text") is not None:
        message["text"] = params["text"]
    for key in ("blocks", "attachments", "metadata"):  # omitted: kept; []: removed
        if params.get(key) == []:
            message.pop(key, None)
        elif params.get(key) is not None:
            message[key] = params[key]
    message["edited"] = {"user": ws.bot_user_id, "ts": ws.next_ts()}
    return {
        "ok": True,
        "channel": channel,
        "ts": ts,
        "text": message["text"],
        "message": copy.deepcopy(message),
    }


def chat_post_ephemeral(ws: Workspace, params: Json) -> Json:
    channel = required(params, "channel", "channel_not_found")
    user = required(params, "user", "user_not_found")
    _check_content(params)
    ts = ws.next_ts()
    ephemeral = ws.bot_message(ts, params)
    ephemeral.update({"channel": channel, "via": "chat.postEphemeral"})
    if params.get("thread_ts"):
        ephemeral["thread_ts"] = params["thread_ts"]
    ws.ephemerals.setdefault(user, []).append(ephemeral)
    return {"ok": True, "message_ts": ts}


def chat_get_permalink(ws: Workspace, params: Json) -> Json:
    channel = required(params, "channel", "channel_not_found")
    ts = required(params, "message_ts", "message_not_found")
    message = ws.message(channel, ts)
    link = ws.permalink(channel, ts, message.get("thread_ts"))
    return {"ok": True, "channel": channel, "permalink": link}


def reactions_add(ws: Workspace, params: Json) -> Json:
    channel = required(params, "channel", "channel_not_found")
    ts = required(params, "timestamp", "message_not_found")
    name = str(params.get("name") or "")
    if not name or ":" in name or " " in name:
        raise SlackError("invalid_name")
    message = ws.message(channel, ts)
    reactions: list[Json] = message.setdefault("reactions", [])
    reaction = next((r for r in reactions if r["name"] == name), None)
    if reaction is None:
        reaction = {"name": name, "users": [], "count": 0}
        reactions.append(reaction)
    if ws.bot_user_id in reaction["users"]:
        raise SlackError("already_reacted")
    reaction["users"].append(ws.bot_user_id)
    reaction["count"] += 1
    return {"ok": True}


def _check_content(params: Json) -> None:
    text, blocks = params.get("text"), params.get("blocks")
    if not text and not blocks and not params.get("attachments"):
        raise SlackError("no_text")
    error = refusal(params)  # Slack's size limits (slacksim.limits)
    if error is not None:
        raise SlackError(error)
