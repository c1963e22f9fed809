"""Who may ask and decide, and the state store being unreachable.

Messages are Slack mrkdwn; words the user typed are shown with `common.quote`.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.texts.approval import not_an_approver
from bot.texts.common import COMMAND, channels, mentions
from bot.texts.usage import USAGE_STATUS


def not_a_requester(approvers: Sequence[str]) -> str:
    return (
        f"You may not use `{COMMAND}`: only the configured requesters may (`requesters` in the "
        f"joinops configuration), and you are not one of them. Ask {mentions(approvers)} to add "
        "you, or to ask for you. Nothing was recorded."
    )


def wrong_channel(allowed: Sequence[str]) -> str:
    return (
        f"`{COMMAND}` works only in {channels(allowed)}, not here. Ask there. Nothing was recorded."
    )


def membership_unknown(groups: Sequence[str]) -> str:
    return (
        f"I could not check whether you are in {mentions(groups)}: Slack did not list its "
        "members. Try again in a minute; if it keeps happening, the app may lack "
        "`usergroups:read`. Nothing was recorded."
    )


STANDING = {
    "guest": "guests of this workspace",
    "external": "members of other organisations (Slack Connect)",
    "deactivated": "deactivated accounts",
}


def standing_refused(why: str) -> str:
    return (
        f"joinops is not available to {STANDING.get(why, why)}: it hands out what adds nodes "
        "to clusters. Ask a full member of this workspace to ask for you (an admin can allow "
        "it: `access.allow_guests` / `access.allow_external`). Nothing was recorded."
    )


def standing_unknown() -> str:
    return (
        "I could not check your account with Slack (users.info did not answer), and joinops "
        "is only for this workspace's members. Try again in a minute; if it keeps happening, "
        "the app may lack `users:read`. Nothing was recorded."
    )


def not_an_approver_ask(approvers: Sequence[str]) -> str:
    return f"{not_an_approver()} The approvers are {mentions(approvers)}."


def store_unreachable() -> str:
    return (
        "I cannot take requests right now (the queue/state store is unreachable); nothing was "
        "recorded — try again in a minute."
    )


def store_lost_midway() -> str:
    return (
        "The queue/state store stopped answering while I handled this, so I could not finish "
        f"it. Try again in a minute; `{USAGE_STATUS}` then shows what was recorded."
    )


def not_recorded(node: str, source: str, target: str) -> str:
    return (
        f"Not recorded: moving `{node}` from {source} to {target} could not be stored (the "
        "queue/state store stopped answering). Nothing will run; ask again in a minute."
    )
