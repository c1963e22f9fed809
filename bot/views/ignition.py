"""An Ignition request's message: the request record (or a refused ask) → an `IgnitionView`.

Stored with the request: `delivery`, whether the file reached the requester (`DELIVERED`) or
why not; the file's expiry and token as `joinops.ignition.request` records them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from bot.texts import ignition as ignition_texts
from bot.texts import request as request_texts
from bot.views import request as request_views
from bot.views.closing import ClosingView, cancel_confirm, closing_of
from joinops.ignition import request as ir
from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from joinops.requests.store import Request

DELIVERY = "delivery"  # an Ignition request's delivery: DELIVERED or why not
DELIVERED = "sent"


@dataclass(frozen=True)
class IgnitionView:
    """What one Ignition request message shows, worded."""

    fallback: str
    header: str
    fields: tuple[str, ...]
    refusals: tuple[str, ...]  # why it is refused; empty when it is not
    about: tuple[str, ...]  # validity, delivery, plan: what approving it does
    note: str  # the small print under them
    closing: ClosingView


def ignition_view(request: Request, approvers: Sequence[str] = ()) -> IgnitionView:
    cluster, role = request.target, str(request.role)
    control_plane = request.role == Role.CONTROL_PLANE
    asked = request_views.waiting_for(request, approvers)
    return IgnitionView(
        fallback=ignition_texts.fallback(request.requester, cluster, role, asked),
        header=ignition_texts.header(cluster, role),
        fields=tuple(ignition_texts.fields(request.requester, cluster, role, request.id)),
        refusals=(),
        about=(
            ignition_texts.validity(ttl(request), control_plane),
            ignition_texts.delivery(request.requester, cluster),
            ignition_texts.plan(cluster, control_plane),
        ),
        note=ignition_texts.without_byo(),
        closing=closing_of(
            request,
            status_line(request, asked),
            cancel=cancel_confirm(
                ignition_texts.confirm_cancel_title(),
                ignition_texts.confirm_cancel(cluster),
                ignition_texts.confirm_cancel_yes(),
            ),
        ),
    )


def refusal_view(requester: str, cluster: str, role: Role, reasons: list[str]) -> IgnitionView:
    return IgnitionView(
        fallback=ignition_texts.refused_fallback(requester, cluster, str(role)),
        header=ignition_texts.refused_header(cluster, str(role)),
        fields=tuple(ignition_texts.fields(requester, cluster, str(role), "")),
        refusals=tuple(request_texts.finding_line("REFUSAL", r) for r in reasons),
        about=(),
        note="",
        closing=ClosingView(request_id="", status=ignition_texts.refused_status()),
    )


def ttl(request: Request) -> timedelta:
    try:
        return timedelta(seconds=int(request.extra.get(ir.EXTRA_TTL) or 0)) or ir.DEFAULT_TTL
    except ValueError:
        return ir.DEFAULT_TTL


def status_line(request: Request, approvers: Sequence[str] = ()) -> str:
    state = request.state
    if state is State.SUCCEEDED:
        delivery = request.extra.get(DELIVERY, "")
        if delivery == DELIVERED:
            valid = float(request.extra.get(ir.VALID_UNTIL) or 0)
            return ignition_texts.sent_status(request.requester, valid)
        return ignition_texts.not_sent_status() if delivery else ignition_texts.made_status()
    if state is State.FAILED:
        return ignition_texts.failed_status()
    if state is State.CANCELLED:
        return ignition_texts.cancelled_status()
    # waiting, queued, rejected: as a migration
    return request_views.status_line(request, approvers)
