"""The bottom of every request message, whatever its kind: the buttons (with the dialog the
Approve button may open) or the decision that replaced them, the Cancel button while a cancel
would still stop the request, then the one-line status."""

from __future__ import annotations

from dataclasses import dataclass

from bot.texts import request as request_texts
from joinops.ignition import request as ir
from joinops.requests.lifecycle import State, sources_of
from joinops.requests.store import Request


@dataclass(frozen=True)
class ConfirmView:
    """The dialog a button (Approve, Cancel) opens before a click counts."""

    title: str
    text: str
    yes: str
    no: str


@dataclass(frozen=True)
class ClosingView:
    request_id: str  # the buttons' value; "" for a refusal
    status: str
    buttons: bool = False
    decision: str = ""  # the line that replaces the buttons once decided
    confirm: ConfirmView | None = None
    approve: str = request_texts.APPROVE
    reject: str = request_texts.REJECT
    cancel: ConfirmView | None = None  # the Cancel button's dialog; None: no Cancel button
    cancel_label: str = request_texts.CANCEL


def approve_confirm(destroys: str, forced_deletions: int) -> ConfirmView | None:
    """The dialog when approving destroys a cluster (`destroys` says so) or deletes pods for
    good; None when it does neither."""
    if forced_deletions:
        return ConfirmView(
            title=request_texts.confirm_force_title(forced_deletions),
            text=request_texts.confirm_force(forced_deletions, destroys),
            yes=request_texts.confirm_force_yes(),
            no=request_texts.confirm_no(),
        )
    if not destroys:
        return None
    return ConfirmView(
        title=request_texts.confirm_destroy_title(),
        text=destroys,
        yes=request_texts.confirm_destroy_yes(),
        no=request_texts.confirm_no(),
    )


def decision_line(request: Request) -> str:
    """What stands where the buttons were."""
    state = request.state
    if state is State.PENDING:
        return ""
    if state is State.REJECTED:
        return request_texts.rejected_by(request.decided_by, request.decided_at)
    if state is State.EXPIRED:
        return request_texts.not_approved_in_time()
    if request.decided_by:
        return request_texts.approved_by(request.decided_by, request.decided_at)
    if state is State.CANCELLED:
        return request_texts.cancelled_by(request.extra.get("cancelled_by", ""))
    return ""


def cancellable(request: Request) -> bool:
    """Would `/join cancel` of this migration or Ignition request stop it (bot/changes.py)?
    Pending, approved, or running before the node agent started (an Ignition file: before a
    worker starts making it). A batch decides for itself (bot/views/batch.py)."""
    if request.state not in sources_of(State.CANCELLED) or request.agent_started:
        return False
    return not (request.kind == ir.KIND and request.state is State.RUNNING)


def cancel_confirm(title: str, text: str, yes: str) -> ConfirmView:
    """The dialog the Cancel button opens: what cancelling does, and a way out."""
    return ConfirmView(title=title, text=text, yes=yes, no=request_texts.confirm_keep())


def closing_of(
    request: Request,
    status: str,
    confirm: ConfirmView | None = None,
    cancel: ConfirmView | None = None,
) -> ClosingView:
    """A stored request's closing: buttons while it waits, then its decision; the Cancel
    button (opening `cancel`) while cancelling it is possible."""
    return ClosingView(
        request_id=request.id,
        status=status,
        buttons=request.state is State.PENDING,
        decision=decision_line(request),
        confirm=confirm,
        cancel=cancel if cancellable(request) else None,
    )
