"""Is a parsed request body one the bot can act on? Pure functions, one per payload kind."""

from __future__ import annotations

from typing import Any

from bot.blocks import APPROVE_ACTION, REJECT_ACTION

OUR_ACTIONS = (APPROVE_ACTION, REJECT_ACTION)


def is_slash_command(body: dict[str, Any]) -> bool:
    return "command" in body and "type" not in body


def is_block_actions(body: dict[str, Any]) -> bool:
    return body.get("type") == "block_actions"


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
    return None


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
    return None
