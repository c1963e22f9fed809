"""`joinops retry ID`: run a failed migration again, from the first step not yet done.

As `/join retry`, it goes back to pending (audited as retried); the operator at the terminal is
also its approver, so it is approved at once, queued, and followed as `joinops migrate` does
(Ctrl-C included: cli/ctrl_c.py). The worker checks the rules again before it acts.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from cli import ctrl_c, texts
from cli.follow import last_event_id
from cli.requests import Requests, operator, request_id
from joinops.queue import enqueue_migration
from joinops.requests.audit import Action
from joinops.requests.events import Event, EventKind
from joinops.requests.lifecycle import State
from joinops.requests.store import Request

EXIT_OK, EXIT_REFUSED = 0, 1


def register(sub: Any) -> None:
    p = sub.add_parser("retry", help="run a failed migration again (checked again first)")
    p.add_argument("request_id", metavar="ID", type=request_id, help="e.g. req-1a2b3c4d")
    p.add_argument("--no-follow", action="store_true", help="return once it is queued")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    requests = Requests.open()
    request = requests.named(args.request_id)
    refusal = _not_retried(request)
    if refusal is not None:
        print(refusal)
        return EXIT_REFUSED
    after = last_event_id(requests.redis, request.id)  # the earlier run's events are history
    with ctrl_c.presses_held() as presses:  # a Ctrl-C now acts once the retry is queued
        if not _approve_again(requests, request, operator()):
            current = requests.store.get(request.id) or request
            print(texts.retry_only_failed(request.id, str(current.state)))
            return EXIT_REFUSED
        enqueue_migration(requests.redis, requests.settings, request.id)
        print(texts.retry_queued(request.id), flush=True)
        if args.no_follow:
            return EXIT_OK
    return ctrl_c.follow(requests.redis, request.id, bool(presses), after)  # as at migrate


def _not_retried(request: Request) -> str | None:
    if request.kind == "batch":
        return texts.retry_batch(request.id)
    if request.parent:
        return texts.retry_member(request.id, request.parent)
    if request.kind != "migrate":
        return texts.retry_kind(request.id, request.kind)
    if request.state not in (State.FAILED, State.RETURNED):  # a returned node may go again
        return texts.retry_only_failed(request.id, str(request.state))
    return None


def _approve_again(requests: Requests, request: Request, user: str) -> bool:
    """failed -> pending (retried) -> approved (by the operator): the bot's transitions."""
    store, now = requests.store, time.time()
    moved, _ = store.transition(
        request.id, State.PENDING, decided_by="", decided_at=0, outcome="", **{"x:retried_by": user}
    )
    if not moved:
        return False
    requests.audit.record(Action.RETRIED, user, request)
    moved, _ = store.transition(request.id, State.APPROVED, decided_by=user, decided_at=now)
    if not moved:
        return False
    requests.audit.record(Action.APPROVED, user, request, texts.RETRY_APPROVAL)
    requests.events.emit(
        Event(request.id, EventKind.STATE, texts.RETRY_APPROVAL, state="approved", at=now)
    )
    return True
