"""A migration request's message and its thread: header, facts, findings, status, replies.

Messages are Slack mrkdwn; words the user typed are shown with `common.quote`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from bot.texts.common import (
    COMMAND,
    FORCED_FIELD,
    SEVERITY_MARKS,
    SEVERITY_WORDS,
    approvers_asked,
    at,
    mentions,
    plain,
    pods_for_good,
    short,
    user,
)
from joinops.wording import minutes

APPROVE = "Approve"
REJECT = "Reject"
CANCEL = "Cancel"  # the button that does what `/join cancel ID` does


def header(node: str, source: str, target: str) -> str:
    return f"Move {node}: {source} → {target}"[:150]


def refused_header(node: str, source: str, target: str) -> str:
    return f"Refused: move {node}: {source} → {target}"[:150]


def fallback(
    requester: str, node: str, source: str, target: str, approvers: Sequence[str] = ()
) -> str:
    """The notification text of the request message (`approvers` while it waits for them)."""
    asks = f"{user(requester)} asks to move `{node}` from {source} to {target}."
    return asks + approvers_asked(approvers)


def refused_fallback(requester: str, node: str, source: str, target: str) -> str:
    return f"Refused: {user(requester)} asked to move `{node}` from {source} to {target}."


def fact_fields(
    requester: str,
    node: str,
    source: str,
    target: str,
    role: str,
    request_id: str,
    force: bool = False,
) -> list[str]:
    fields = [
        f"*Requested by*\n{user(requester)}",
        f"*Node*\n`{node}`",
        f"*From → to*\n{source} → {target}",
        f"*Role in {target}*\n{role}",
    ]
    if force:
        fields.append(f"*Forced*\n{FORCED_FIELD}")
    if request_id:
        fields.append(f"*Request*\n`{request_id}`")
    return fields


def finding_line(severity: str, text: str) -> str:
    """A rule's finding: its text is the cluster's word (a node's architecture...), escaped."""
    return f"{SEVERITY_MARKS[severity]} *{SEVERITY_WORDS[severity]}:* {plain(text)}"


def no_findings() -> str:
    return ":white_check_mark: Every rule passes; nothing to warn about."


def versions_unknown() -> str:
    return "Versions: not compared (the node or the target could not be read)."


def plan_lines(titles: Sequence[str]) -> str:
    return "*Plan*\n" + "\n".join(f"{i}. {title}" for i, title in enumerate(titles, 1))


def refused_status() -> str:
    return (
        ":no_entry: Refused: nothing was done and nothing waits for approval. "
        f"Fix what is said above, then ask again with `{COMMAND}`."
    )


def confirm_destroy_title() -> str:
    return "Destroy the source cluster?"


def confirm_destroy(source: str) -> str:
    return f"Approving moves the last node of {source}: {source} will no longer exist."


def confirm_destroy_yes() -> str:
    return "Approve and destroy"


def confirm_force_title(count: int) -> str:
    return f"Approve and delete {pods_for_good(count)}?"[:100]


def confirm_force(count: int, destroys: str = "") -> str:
    text = (
        f"This request was made with `force`: the drain deletes {pods_for_good(count)}. "
        f"They are gone for good. {destroys}"
    )
    return text.strip()[:300]


def confirm_force_yes() -> str:
    return "Approve and delete"


def confirm_no() -> str:
    return "Cancel"


def confirm_cancel_title(node: str) -> str:
    return f"Cancel the move of {node}?"[:100]


def confirm_cancel(node: str, source: str) -> str:
    return (
        f"`{node}` stays in {source}: anything done to it so far is undone. This is "
        f"`{COMMAND} cancel`; it works until the node agent starts."
    )[:300]


def confirm_cancel_yes() -> str:
    return "Cancel the move"


def confirm_keep() -> str:
    """The dialog's way out of cancelling ("Cancel" would be ambiguous there)."""
    return "Keep it"


def approved_by(user_id: str, timestamp: float) -> str:
    return f":white_check_mark: Approved by {user(user_id)} at {at(timestamp)}"


def rejected_by(user_id: str, timestamp: float) -> str:
    return f":no_entry_sign: Rejected by {user(user_id)} at {at(timestamp)}"


def cancelled_by(user_id: str) -> str:
    return f":heavy_multiplication_x: Cancelled by {user(user_id)}"


def not_approved_in_time() -> str:
    return ":hourglass: Nobody approved it in time."


def waiting_status(expires_at: float, retry: bool, approvers: Sequence[str] = ()) -> str:
    """A request waiting for a decision; naming the approvers (`<@U…>`, `<!subteam^S…>`)
    notifies them."""
    again = "again " if retry else ""
    who = f" ({mentions(approvers)})" if approvers else ""
    return (
        f":large_yellow_circle: Waiting {again}for an approver{who}; expires at {at(expires_at)} "
        "if nobody decides."
    )


def queued_status() -> str:
    return ":large_blue_circle: Approved; waiting for a worker to start it."


def _step_place(number: int, total: int) -> str:
    """`step 3/7 ` for a step of the migration plan; `step ` for one it does not list."""
    return f"{number}/{total} " if number else ""


def running_status(number: int, total: int, step: str, text: str) -> str:
    place = _step_place(number, total)
    return f":arrows_counterclockwise: Running: step {place}`{step}`: {short(text)}"


def succeeded_status(outcome: str) -> str:
    return f":large_green_circle: Succeeded: {short(outcome)}"


def failed_status(step: str) -> str:
    where = f" at step `{step}`" if step else ""
    return (
        f":red_circle: Failed{where}. The thread says where the node is and what to do; "
        f"`{COMMAND} retry` runs it again from there."
    )


def cancelled_status() -> str:
    return ":white_circle: Cancelled; the node was left as it was."


def rejected_status() -> str:
    return ":white_circle: Rejected: nothing was done."


EXPIRED = "expired, not run"


def expired_status() -> str:
    return f":hourglass: This request {EXPIRED}"


def retry_reply(user_id: str, timestamp: float, approvers: Sequence[str]) -> str:
    """A new reply, so that mentioning the approvers notifies them (an edit of the request's
    message that adds mentions notifies nobody)."""
    return (
        f"Retry asked by {user(user_id)} at {at(timestamp)}: waiting for an approver again "
        "(the buttons are back on the request above). Steps that succeeded are not run again."
        f"{approvers_asked(approvers)}"
    )


def rejected_reply(user_id: str, timestamp: float, requester: str) -> str:
    return f"Rejected by {user(user_id)} at {at(timestamp)}. {user(requester)}, nothing was done."


# A step's reply: posted once when the step starts, then edited in place as it goes on and
# ends (an edit notifies nobody: the thread's followers hear of each step once).


def step_running(number: int, total: int, step: str, text: str) -> str:
    return f":arrow_forward: Step {_step_place(number, total)}`{step}` running: {plain(text)}"


def step_retrying(number: int, total: int, step: str, text: str) -> str:
    """The engine's words say what failed and that it is tried again."""
    return f":repeat: Step {_step_place(number, total)}`{step}`: {plain(text)}"


def step_done(number: int, total: int, step: str, text: str, seconds: float) -> str:
    took = f" ({seconds:.1f} s)" if seconds else ""
    return f":white_check_mark: Step {_step_place(number, total)}`{step}` done{took}: {plain(text)}"


def step_failed(number: int, total: int, step: str, text: str) -> str:
    return f":x: Step {_step_place(number, total)}`{step}` failed: {plain(text)}"


def step_stopped(number: int, total: int, step: str, state: str) -> str:
    """A step shown running when its request ended without its own outcome (a cancel)."""
    return (
        f":black_square_for_stop: Step {_step_place(number, total)}`{step}` stopped: "
        f"the request ended ({plain(state)})."
    )


def returned_status() -> str:
    return (
        ":large_yellow_circle: Returned: the join failed and the node is back in its source. "
        f"`{COMMAND} retry` asks to move it again."
    )


def returned_reply(requester: str, outcome: str) -> str:
    return f":leftwards_arrow_with_hook: {user(requester)} {plain(outcome)}"


def succeeded_reply(requester: str, outcome: str) -> str:
    return f":tada: {user(requester)} done: {plain(outcome)}"


def failed_reply(requester: str, outcome: str) -> str:
    return f":red_circle: {user(requester)} {plain(outcome)}"


def cancelled_reply(requester: str, outcome: str, by: str) -> str:
    who = f" (cancelled by {user(by)})" if by and by != requester else ""
    return f":white_circle: {user(requester)} {plain(outcome)}{who}"


def expired_reply(requester: str, timeout: timedelta) -> str:
    return f":hourglass: {user(requester)} nobody approved within {minutes(timeout)}: {EXPIRED}."


def cancelling_status() -> str:
    return ":white_circle: Cancelling: the worker is putting the node back as it was."
