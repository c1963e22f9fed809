"""The answers to an Approve or Reject click that changes nothing.

Messages are Slack mrkdwn; words the user typed are shown with `common.quote`.
"""

from __future__ import annotations

from bot.texts.common import COMMAND, at, user
from bot.texts.request import EXPIRED


def not_an_approver() -> str:
    return (
        "Only the configured approvers can approve or reject a move, and you are not one of "
        "them. Nothing changed."
    )


def no_self_approval() -> str:
    return "You asked for this move, so someone else must approve it. Nothing changed."


def already_decided(
    state: str, decided_by: str, decided_at: float, request_id: str, failed_step: str = ""
) -> str:
    who = f" by {user(decided_by)}" if decided_by else ""
    when = f" at {at(decided_at)}" if decided_at else ""
    lines = {
        "approved": f"Request `{request_id}` was already approved{who}{when}.",
        "running": f"Request `{request_id}` was already approved{who}{when} and is running.",
        "succeeded": f"Request `{request_id}` already ran and succeeded.",
        "failed": (
            f"Request `{request_id}` already ran and failed"
            + (f" at step `{failed_step}`" if failed_step else "")
            + f". `{COMMAND} retry {request_id}` asks for approval again."
        ),
        "rejected": f"Request `{request_id}` was already rejected{who}{when}.",
        "expired": f"Request `{request_id}` {EXPIRED}: nobody approved it in time.",
        "cancelled": f"Request `{request_id}` was cancelled.",
    }
    return lines.get(state, f"Request `{request_id}` is {state}.") + " Nothing changed."


def refused_at_approval(request_id: str) -> str:
    return (
        f"Request `{request_id}` failed instead of running: the check right before it stopped "
        "it (a rule that no longer allows it, or a cluster it could not reach). The thread says "
        "which."
    )
