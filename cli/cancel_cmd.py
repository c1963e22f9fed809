"""`joinops cancel ID`: stop a request before its node agent starts; the worker undoes its steps.

As `/join cancel` does: the same store transition (refused once the agent started), the same
audit entry and event; the operator at the terminal may cancel any request.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from cli import texts
from cli.requests import Requests, children, operator, request_id
from joinops.queue import enqueue_batch_advance
from joinops.requests import cancel_texts, outcome_texts
from joinops.requests.audit import Action
from joinops.requests.events import Event, EventKind
from joinops.requests.lifecycle import State
from joinops.requests.store import Request
from joinops.requests.surface import Surface

EXIT_OK, EXIT_REFUSED = 0, 1


def register(sub: Any) -> None:
    p = sub.add_parser("cancel", help="cancel a request before its node agent starts")
    p.add_argument("request_id", metavar="ID", type=request_id, help="e.g. req-1a2b3c4d")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    requests = Requests.open()
    request = requests.named(args.request_id)
    if request.kind == "batch":
        answer, code = cancel_batch(requests, request, operator())
    elif request.kind != "migrate":
        answer, code = texts.cannot_cancel_kind(request.id, request.kind), EXIT_REFUSED
    else:
        answer, code = cancel(requests, request, operator())
    print(answer)
    return code


def cancel(requests: Requests, request: Request, user: str) -> tuple[str, int]:
    store = requests.store
    moved, before = _stop(requests, request, user)
    if not moved:
        current = store.get(request.id) or request
        if current.state.is_active and current.agent_started:
            text = cancel_texts.cannot_cancel_agent(
                request.id, request.node, request.source, request.target, Surface.TERMINAL
            )
            return text, EXIT_REFUSED
        return cancel_texts.cannot_cancel_finished(request.id, str(current.state)), EXIT_REFUSED
    requests.audit.record(Action.CANCELLED, user, request, f"was {before}")
    if request.parent:  # a batch's node: the batch goes on without it
        enqueue_batch_advance(requests.redis, request.parent)
    if before not in (State.PENDING, State.APPROVED):
        answer = cancel_texts.cancelling(request.id, request.node, Surface.TERMINAL)
        return answer, EXIT_OK  # the worker reports the end
    return cancel_texts.cancelled_now(request.id), EXIT_OK


def cancel_batch(requests: Requests, batch: Request, user: str) -> tuple[str, int]:
    """Every node of the batch not past its point of no return stops; the batch then ends."""
    if batch.state not in (State.APPROVED, State.RUNNING):
        return cancel_texts.cannot_cancel_finished(batch.id, str(batch.state)), EXIT_REFUSED
    requests.store.update(batch.id, **{"x:cancelled_by": user})
    stopped, going_on = 0, []
    for child in children(requests.store, batch):
        if child.state.is_terminal:
            continue
        moved, _ = _stop(requests, child, user)
        if moved:
            stopped += 1
        else:
            going_on.append(child.node)
    requests.audit.record(Action.CANCELLED, user, batch, f"{stopped} nodes stopped")
    enqueue_batch_advance(requests.redis, batch.id)  # it ends once every node has
    return (
        cancel_texts.batch_cancelling(batch.id, stopped, going_on, Surface.TERMINAL),
        EXIT_OK,
    )


def _stop(requests: Requests, request: Request, user: str) -> tuple[bool, State | None]:
    """The bot's cancel transition; a request no worker runs yet gets its outcome here."""
    moved, before = requests.store.transition(
        request.id, State.CANCELLED, unless_flag="agent_started", **{"x:cancelled_by": user}
    )
    if moved and before in (State.PENDING, State.APPROVED):
        # No worker runs it (a queued job finds it cancelled and stops): say so here.
        outcome = outcome_texts.cancelled(request)
        requests.store.update(request.id, outcome=outcome)
        requests.events.emit(
            Event(request.id, EventKind.STATE, outcome, state="cancelled", at=time.time())
        )
    return moved, before
