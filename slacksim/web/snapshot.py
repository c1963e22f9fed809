"""What the page draws: the channel as one person sees it, from SlackSim's state."""

from __future__ import annotations

from typing import Any

from slacksim.server import SlackSim

Json = dict[str, Any]


def snapshot(sim: SlackSim, channel: str, viewer: str, people: dict[str, str]) -> Json:
    """The channel's messages oldest first, each with its thread, and the messages only
    `viewer` sees (ephemeral) in among them; `people`: user id -> name, for mentions."""
    shown: list[Json] = []
    for ts, message in sim.messages(channel).items():
        replies = sim.thread(channel, ts) if message.get("reply_count") else []
        shown.append({**_message(message), "replies": [_message(r) for r in replies]})
    for ephemeral in sim.ephemerals(viewer):
        if ephemeral.get("channel") in (None, channel):
            shown.append({**_message(ephemeral), "ephemeral": True, "replies": []})
    shown.sort(key=lambda m: float(m["ts"] or 0))
    names = {**people, sim.workspace.bot_user_id: sim.workspace.bot_name}
    return {"channel": channel, "viewer": viewer, "people": names, "messages": shown}


def _message(message: Json) -> Json:
    return {
        "ts": message.get("ts"),
        "user": message.get("user"),
        "bot": bool(message.get("bot_id")),
        "text": message.get("text") or "",
        "blocks": message.get("blocks") or [],
        "ephemeral": False,
    }
