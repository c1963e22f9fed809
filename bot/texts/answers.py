"""The ephemeral answers to `/join` commands: acknowledgements, cancel and retry answers.

Messages are Slack mrkdwn; words the user typed are shown with `common.quote`.
"""

from __future__ import annotations

from bot.texts.common import user
from bot.texts.usage import USAGE_LIST


def checking(node: str, source: str, target: str) -> str:
    return f"Checking `{node}` in {source} and {target}…"


def configuration_problem(detail: str) -> str:
    return f"I cannot use the cluster configuration: {detail}"


def cannot_post(channel: str, error: str) -> str:
    return (
        f"I could not post the request in <#{channel}> (Slack said `{error}`), so nothing was "
        "requested. Invite me there (`/invite @joinops`), or ask in a public channel."
    )


def not_in_a_conversation(where: str) -> str:
    return (
        f"Requests are posted where they are asked, for the approvers to see, and {where} is no "
        "place for that: nothing was asked. Type the same `/join` in a channel where I am "
        "(`/invite @joinops` there first if I am not). `help`, `list`, `status` and `loans` "
        "work here."
    )


def too_many_open(open_now: int, limit: int) -> str:
    return (
        f"You have {open_now} requests open, the most one person may have at once "
        f"(`policy.max_open_requests_per_user`: {limit}), so nothing was asked. `/join list` "
        "shows them: wait for some to end, or `/join cancel ID` those you no longer need, then "
        "ask again."
    )


def no_worker_answered(seconds: int) -> str:
    return (
        f"No worker answered within {seconds} s, so I could not check the clusters and nothing "
        "was asked. Is `joinops worker` running? Try again in a minute; if it keeps happening, "
        "the workers' log says why."
    )


def clicks_busy(bound: int) -> str:
    """A click answered at once because `bound` clicks are being worked on already."""
    return (
        f":hourglass: I am busy with {bound} other clicks right now, so I did not take this "
        "one: nothing changed. Try again in a minute."
    )


def internal_error() -> str:
    return (
        "Something went wrong on my side and I could not finish that; the bot's log has the "
        "details. Nothing was changed that you were not told about."
    )


def unknown_request(request_id: str) -> str:
    return f"There is no request `{request_id}`. `{USAGE_LIST}` shows the active ones."


def no_requests_of(user_id: str) -> str:
    return f"{user(user_id)} has no requests yet. `{USAGE_LIST}` shows the active ones."


def not_allowed_to(action: str, request_id: str) -> str:
    return (
        f"Only the requester or an approver can {action} request `{request_id}`. Nothing changed."
    )


def retry_only_failed(request_id: str, state: str) -> str:
    return f"Only a failed request can be retried; `{request_id}` is {state}."


def retry_asked(request_id: str) -> str:
    return (
        f"`{request_id}` waits for approval again; once approved it resumes from the step that "
        "failed."
    )


def retry_without_message(request_id: str) -> str:
    return (
        f"`{request_id}` was not requested in Slack (no request message to approve on); "
        "retry it where it was started."
    )


def surveying() -> str:
    return "Asking each cluster…"


def checking_cluster(cluster: str) -> str:
    return f"Checking {cluster}…"


def checking_nodes(count: int, target: str) -> str:
    return f"Looking for {count} nodes and checking them against {target}…"


def locating(node: str) -> str:
    return f"Looking for `{node}` in the clusters…"


def checking_all(source: str, target: str) -> str:
    return f"Checking every node of {source} against {target}…"
