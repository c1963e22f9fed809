"""`joinops cancel ID`: stop a request before its node agent starts; the worker undoes its steps.

As `/join cancel` does: the same store transition (refused once the agent started), the same
audit entry and event; the operator at the terminal may cancel any request. Ctrl-C at
`joinops migrate` cancels through here too (cli.ctrl_c).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from enum import Enum
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


class Result(Enum):
    CANCELLED = "cancelled"  # no worker had taken it: it ended here, nothing was changed
    STOPPING = "stopping"  # its worker (or a batch's) stops after the step and undoes it
    TOO_LATE = "too-late"  # past the point of no return: the move goes on
    ENDED = "ended"  # it had ended already
    ELSEWHERE = "elsewhere"  # a kind of request the terminal does not cancel


@dataclass(frozen=True)
class Answer:
    result: Result
    text: str
    going_on: tuple[str, ...] = ()  # a batch's nodes past the point of no return

    @property
    def code(self) -> int:
        return EXIT_OK if self.result in (Result.CANCELLED, Result.STOPPING) else EXIT_REFUSED


def register(sub: Any) -> None:
    p = sub.add_parser("cancel", help="cancel a request before its node agent starts")
    p.add_argument("request_id", metavar="ID", type=request_id, help="e.g. req-1a2b3c4d")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    requests = Requests.open()
    answer = cancel_any(requests, requests.named(args.request_id), operator())
    print(answer.text)
    return answer.code


def cancel_any(requests: Requests, request: Request, user: str) -> Answer:
    """A migration, or every node of a batch not past its point of no return."""
    if request.kind == "batch":
        return cancel_batch(requests, request, user)
    if request.kind != "migrate":
        return Answer(Result.ELSEWHERE, texts.cannot_cancel_kind(request.id, request.kind))
    return cancel(requests, request, user)


def cancel(requests: Requests, request: Request, user: str) -> Answer:
    store = requests.store
    moved, before = _stop(requests, request, user)
    if not moved:
        current = store.get(request.id) or request
        if current.state.is_active and current.agent_started:
            text = cancel_texts.cannot_cancel_agent(
                request.id, request.node, request.source, request.target, Surface.TERMINAL
            )
            return Answer(Result.TOO_LATE, text)
        return Answer(Result.ENDED, _nothing_to_cancel(requests, current))
    requests.audit.record(Action.CANCELLED, user, request, f"was {before}")
    if request.parent:  # a batch's node: the batch goes on without it
        enqueue_batch_advance(requests.redis, request.parent)
    if before not in (State.PENDING, State.APPROVED):  # the worker reports the end
        return Answer(
            Result.STOPPING, cancel_texts.cancelling(request.id, request.node, Surface.TERMINAL)
        )
    return Answer(Result.CANCELLED, cancel_texts.cancelled_now(request.id))


def cancel_batch(requests: Requests, batch: Request, user: str) -> Answer:
    """Every node of the batch not past its point of no return stops; the batch then ends."""
    if batch.state not in (State.APPROVED, State.RUNNING):
        return Answer(Result.ENDED, _nothing_to_cancel(requests, batch))
    requests.store.update(batch.id, **{"x:cancelled_by": user})
    stopped, running, going_on = 0, 0, []
    for child in children(requests.store, batch):
        if child.state.is_terminal:
            continue
        moved, before = _stop(requests, child, user)
        if not moved:
            going_on.append(child.node)
            continue
        stopped += 1
        if before not in (State.PENDING, State.APPROVED):  # a worker puts it back first
            running += 1
    requests.audit.record(Action.CANCELLED, user, batch, f"{stopped} nodes stopped")
    enqueue_batch_advance(requests.redis, batch.id)  # it ends once every node has
    text = cancel_texts.batch_cancelling(batch.id, stopped, going_on, Surface.TERMINAL)
    if going_on and not stopped:
        return Answer(Result.TOO_LATE, text, tuple(going_on))
    result = Result.STOPPING if running or going_on else Result.CANCELLED
    return Answer(result, text, tuple(going_on))


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


def _nothing_to_cancel(requests: Requests, request: Request) -> str:
    """It ended: how, and when (its last state event's time, in the terminal's local time)."""
    ended = next(
        (e.at for e in reversed(requests.events.history(request.id)) if e.is_final and e.at),
        0.0,
    )
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ended)) if ended else ""
    return cancel_texts.cannot_cancel_finished(request.id, str(request.state), when)
