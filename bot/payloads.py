"""Is a parsed request body one the bot can act on? Pure functions, one per payload kind.

Every name and id the bot reads from a payload is checked here, before any listener sees it:
user, channel and team IDs have Slack's shape, a join button's value is a request id, the
command text and every string the bot keeps are of sane length, the response URL is an HTTP(S)
URL. A payload that fails is answered 400 and nothing else happens (bot/middleware.py,
bot/http.py).
"""

from __future__ import annotations

import re
from typing import Any

from bot.render.blocks import APPROVE_ACTION, CANCEL_ACTION, REJECT_ACTION
from joinops.requests.ids import is_request_id

OUR_ACTIONS = (APPROVE_ACTION, REJECT_ACTION, CANCEL_ACTION)

USER_ID = re.compile(r"[UW][A-Z0-9]{2,31}")
CHANNEL_ID = re.compile(r"[CDG][A-Z0-9]{2,31}")
TEAM_ID = re.compile(r"[TE][A-Z0-9]{2,31}")
ACTION_ID = re.compile(r"[A-Za-z0-9_.:-]{1,255}")  # Slack allows 255 characters
MAX_TEXT = 4000  # characters of slash command text; the longest real command is far shorter
MAX_VALUE = 2000  # characters of a button's value (Slack's own limit)
MAX_URL = 2000


def is_slash_command(body: dict[str, Any]) -> bool:
    return "command" in body and "type" not in body


def is_block_actions(body: dict[str, Any]) -> bool:
    return body.get("type") == "block_actions"


def command_text(body: dict[str, Any]) -> str:
    return str(body.get("text") or "")


def first_action(body: dict[str, Any]) -> dict[str, Any]:
    """The clicked element of a (checked) block_actions payload."""
    action = body["actions"][0]
    assert isinstance(action, dict)
    return action


def click_channel(body: dict[str, Any]) -> str | None:
    """The channel of the clicked message; None when Slack did not say (a modal, a home tab)."""
    channel = body.get("channel")
    found = channel.get("id") if isinstance(channel, dict) else None
    return str(found) if found else None


def clicked_in_thread(body: dict[str, Any]) -> str | None:
    """The thread's ts when the clicked message is a reply inside a thread (its `thread_ts` is
    not its own `ts`); None for a click elsewhere, a thread's root included."""
    if not is_block_actions(body):
        return None
    message = body.get("message")
    if not isinstance(message, dict):
        return None
    thread, ts = message.get("thread_ts"), message.get("ts")
    return str(thread) if thread and thread != ts else None


def private_conversation(command: dict[str, Any]) -> str:
    """ "a direct message" or "a group direct message" when a slash command was typed in one
    (its channel id starts with D; a group DM's name with `mpdm-`), else ""."""
    channel, name = str(command.get("channel_id") or ""), str(command.get("channel_name") or "")
    if channel.startswith("D") or name == "directmessage":
        return "a direct message"
    if name.startswith("mpdm-"):
        return "a group direct message"
    return ""


def problem(body: Any) -> str | None:
    """What is wrong with a body the bot would act on; None when it is fine (or not ours)."""
    if not isinstance(body, dict):
        return "the body is not a form or JSON object"
    if is_slash_command(body):
        return _slash_command_problem(body)
    if is_block_actions(body):
        return _block_actions_problem(body)
    return None


def _slash_command_problem(body: dict[str, Any]) -> str | None:
    for key in ("user_id", "channel_id", "response_url"):
        if not isinstance(body.get(key), str) or not body[key]:
            return f"slash command without {key}"
    if not isinstance(body.get("text", ""), str):
        return "slash command text is not text"
    if len(body.get("text") or "") > MAX_TEXT:
        return f"slash command text longer than {MAX_TEXT} characters"
    return (
        _id_problem("user_id", body["user_id"], USER_ID)
        or _id_problem("channel_id", body["channel_id"], CHANNEL_ID)
        or _optional_id_problem("team_id", body.get("team_id"), TEAM_ID)
        or _url_problem(body["response_url"])
    )


def _block_actions_problem(body: dict[str, Any]) -> str | None:
    user = body.get("user")
    if not isinstance(user, dict) or not isinstance(user.get("id"), str) or not user["id"]:
        return "block_actions without user.id"
    actions = body.get("actions")
    if not isinstance(actions, list) or not actions or not isinstance(actions[0], dict):
        return "block_actions without actions"
    action = actions[0]
    if action.get("action_id") in OUR_ACTIONS and not isinstance(action.get("value"), str):
        return "a join button without a value"
    if not isinstance(body.get("response_url"), str):
        return "block_actions without response_url"
    return (
        _id_problem("user.id", user["id"], USER_ID)
        or _action_problem(action)
        or _optional_id_problem("channel.id", _inner_id(body.get("channel")), CHANNEL_ID)
        or _optional_id_problem("team.id", _inner_id(body.get("team")), TEAM_ID)
        or _url_problem(body["response_url"])
    )


def _action_problem(action: dict[str, Any]) -> str | None:
    action_id = action.get("action_id")
    if not isinstance(action_id, str) or not ACTION_ID.fullmatch(action_id):
        return "an action without a well-formed action_id"
    value = action.get("value")
    if value is not None and (not isinstance(value, str) or len(value) > MAX_VALUE):
        return f"an action value that is not text of at most {MAX_VALUE} characters"
    if action_id in OUR_ACTIONS and not is_request_id(str(value)):
        return "a join button whose value is not a request id"
    return None


def _inner_id(part: Any) -> Any:
    """`channel.id` / `team.id`; absent (None) when the part itself is absent or null."""
    if part is None:
        return None
    return part.get("id", "") if isinstance(part, dict) else part


def _id_problem(name: str, value: Any, shape: re.Pattern[str]) -> str | None:
    if isinstance(value, str) and shape.fullmatch(value):
        return None
    return f"{name} is not a Slack ID"


def _optional_id_problem(name: str, value: Any, shape: re.Pattern[str]) -> str | None:
    return None if value is None else _id_problem(name, value, shape)


def _url_problem(url: str) -> str | None:
    if len(url) <= MAX_URL and url.startswith(("https://", "http://")):
        return None
    return "response_url is not an HTTP(S) URL"
