"""A POST to a response_url (a slash command's or an action's): what Slack answers and what it
does to the workspace (replace or delete the original, post in channel, or an ephemeral)."""

from __future__ import annotations

from slacksim.limits import refusal
from slacksim.workspace import Json, ResponseTarget, Workspace

RESPONSE_URL_USES = 5  # Slack: a response_url works up to 5 times (within 30 minutes)


def respond(ws: Workspace, response_id: str, body: Json) -> tuple[int, str]:
    """A POST to a response_url: (HTTP status, body text) as Slack answers it."""
    used = ws.responses.setdefault(response_id, [])
    if len(used) >= RESPONSE_URL_USES:
        return 404, "used_url"
    deleting = bool(body.get("delete_original"))
    if not deleting and not body.get("text") and not body.get("blocks"):
        return 400, "no_text"
    error = refusal(body)  # Slack's size limits (slacksim.limits)
    if error is not None:
        return 400, error
    used.append(body)
    _apply_response(ws, ws.response_targets.get(response_id, ResponseTarget()), body)
    return 200, "ok"


def _apply_response(ws: Workspace, target: ResponseTarget, body: Json) -> None:
    original = None
    if target.channel and target.message_ts:
        original = ws.channels.get(target.channel, {}).get(target.message_ts)
    if body.get("delete_original") and original is not None:
        del ws.channels[target.channel or ""][target.message_ts or ""]
    elif body.get("replace_original") and original is not None:
        original["text"] = body.get("text") or ""
        for key in ("blocks", "attachments"):
            if body.get(key) is not None:
                original[key] = body[key]
            else:
                original.pop(key, None)
    elif body.get("response_type") == "in_channel" and target.channel:
        message = ws.bot_message(ws.next_ts(), body)
        ws.store(target.channel, message, body.get("thread_ts") or target.thread_ts)
    elif body.get("response_type", "ephemeral") == "ephemeral" and target.user:
        ephemeral = ws.bot_message(ws.next_ts(), body)
        ephemeral.update({"channel": target.channel, "via": "response_url"})
        ws.ephemerals.setdefault(target.user, []).append(ephemeral)
