"""`joinops migrate`: move one node, several, or every node of a cluster, and follow it.

joinops migrate NODE --from SRC --to DST [--as ROLE] [--force] [--yes]
joinops migrate NODE NODE... [--from SRC] --to DST [--as ROLE] [--force] [--yes]
joinops migrate --all --from SRC --to DST [--force] [--yes]
`--for DURATION` (any form) lends the nodes: each moves back to its source when it is up.
Redis is asked first (a PING); Ctrl-C while it follows is a decision (cli.ctrl_c).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import redis

from cli import ctrl_c, redis_reach, texts
from cli.common import add_force_argument, add_role_argument, load
from cli.plan_cmd import render
from cli.requests import operator
from joinops.errors import UsageError
from joinops.loans.duration import parse_loan
from joinops.loans.lend import lend
from joinops.loans.store import LoanStore
from joinops.loans.texts import spell
from joinops.queue import enqueue_batch_advance, enqueue_migration
from joinops.requests.asks import MigrationAsk, validate_ask
from joinops.requests.audit import Action, AuditLog
from joinops.requests.lifecycle import State
from joinops.requests.store import Request, RequestStore
from joinops.rules import batch as batches
from joinops.rules.check import check
from joinops.settings import Settings


def register(sub: Any) -> None:
    p = sub.add_parser("migrate", help="move nodes to another cluster and follow the progress")
    p.add_argument(
        "nodes", metavar="NODE", nargs="*", help="node names, exactly as `kubectl get nodes` shows"
    )
    p.add_argument("--all", action="store_true", help="every node of --from (workers first)")
    p.add_argument(
        "--from",
        dest="source",
        metavar="SRC",
        help="source cluster (looked up per node when several nodes are given)",
    )
    p.add_argument("--to", dest="target", required=True, metavar="DST", help="target cluster")
    add_role_argument(p)
    add_force_argument(p)
    p.add_argument(
        "--for",
        dest="loan",
        metavar="DURATION",
        help="lend the nodes: each moves back to its source after DURATION (90s, 45m, 8h, 2d)",
    )
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.add_argument(
        "--no-follow", action="store_true", help="print the request id and return once it is queued"
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.all and args.nodes:
        raise UsageError("give node names or --all, not both")
    if args.all or len(args.nodes) > 1:
        return _run_batch(args)
    if not args.nodes:
        raise UsageError("name a node to move (or several, or --all --from SRC)")
    if args.source is None:
        raise UsageError("--from SRC is needed to move one node")
    return _run_one(args)


def _loan(args: argparse.Namespace, settings: Settings) -> timedelta | None:
    """The `--for` asked, within the policy's range (a UsageError names the range)."""
    if args.loan is None:
        return None
    if settings.policy.loan_returns_need_approval:
        # its return would wait for an approver's click, and a terminal loan has no message
        raise UsageError(texts.loan_return_needs_slack())
    return parse_loan(args.loan, settings.policy)


def _lend(connection: redis.Redis, requests: list[Request], length: timedelta | None) -> None:
    if length is None:
        return
    store = RequestStore(connection)
    for request in requests:
        lend(LoanStore(connection), store, request, length)


def _run_one(args: argparse.Namespace) -> int:
    settings, registry = load()
    length = _loan(args, settings)
    ask = MigrationAsk(args.nodes[0], args.source, args.target, args.role, force=args.force)
    validate_ask(ask, registry.names_to_parse)
    connection = _store(settings)
    verdict = check(
        ask,
        registry.get(ask.source),
        registry.get(ask.target),
        agent_namespace=settings.agent.namespace,
        agent_image=settings.agent.image,
    )
    print(render(verdict))
    if not verdict.allowed:
        return 1
    if not args.yes and not _confirmed(f"Move {ask.node} from {ask.source} to {ask.target}?"):
        print("Not started.")
        return 1
    user = operator()

    def create() -> Request:
        request = RequestStore(connection).create(
            Request(
                id="",
                node=ask.node,
                source=ask.source,
                target=ask.target,
                role=ask.role,
                state=State.APPROVED,
                requester=user,
                decided_by=user,
                destroys_source=verdict.destroys_source,
                from_control_plane=bool(verdict.node and verdict.node.is_control_plane),
                force=ask.force,
            )
        )
        _lend(connection, [request], length)
        return request

    code = _queue_and_follow(
        args, connection, create, lambda i: enqueue_migration(connection, settings, i)
    )
    if length is not None and code == 0 and not args.no_follow:
        print(texts.lent_for(ask.node, ask.source, spell(length)))
    return code


def _run_batch(args: argparse.Namespace) -> int:
    settings, registry = load()
    length = _loan(args, settings)
    connection = _store(settings)
    limit = settings.max_batch_nodes  # more is a UsageError (exit 2): nothing is created
    if args.all:
        if args.source is None:
            raise UsageError("--all needs --from SRC")
        plan = batches.plan_all(
            args.source,
            args.target,
            registry,
            force=args.force,
            max_nodes=limit,
            agent_namespace=settings.agent.namespace,
            agent_image=settings.agent.image,
        )
    else:
        plan = batches.plan_nodes(
            args.nodes,
            args.source,
            args.target,
            args.role,
            registry,
            force=args.force,
            max_nodes=limit,
            agent_namespace=settings.agent.namespace,
            agent_image=settings.agent.image,
        )
    print(batches.render(plan))
    if not plan.allowed:
        return 1
    if not args.yes and not _confirmed(f"Move {len(plan.items)} nodes to {plan.target}?"):
        print("Not started.")
        return 1
    user = operator()

    def create() -> Request:
        store = RequestStore(connection)
        batch = batches.create_batch(
            store, plan, requester=user, decided_by=user, state=State.APPROVED
        )
        children = [store.get(i) for i in batch.extra.get("children", "").split(",") if i]
        _lend(connection, [c for c in children if c is not None], length)
        return batch

    return _queue_and_follow(
        args, connection, create, lambda i: enqueue_batch_advance(connection, i)
    )


def _store(settings: Settings) -> redis.Redis:
    """Redis, asked first: one that does not answer is said at once, before any cluster is
    read (a PING with a short timeout; `cli.main` says where it looked)."""
    redis_reach.ping(settings.secrets.redis_url)
    return redis.Redis.from_url(settings.secrets.redis_url)


def _queue_and_follow(
    args: argparse.Namespace,
    connection: redis.Redis,
    create: Callable[[], Request],
    enqueue: Callable[[str], object],
) -> int:
    """Make the request and queue it, whole even if Ctrl-C comes meanwhile (then it decides
    at once, as it does while the request is followed: cli.ctrl_c)."""
    with ctrl_c.presses_held() as presses:
        request = create()
        _audit_cli_start(connection, request)
        enqueue(request.id)
        print(f"Request {request.id} queued.", flush=True)
    if args.no_follow and not presses:
        return 0
    return ctrl_c.follow(connection, request.id, pressed=bool(presses))


def _audit_cli_start(connection: redis.Redis, request: Request) -> None:
    """From the CLI, the operator's confirmation is both the request and the approval."""
    audit = AuditLog(connection)
    audit.record(Action.REQUESTED, request.requester, request)
    audit.record(Action.APPROVED, request.requester, request, "confirmed at the command line")


def _confirmed(question: str) -> bool:
    if not sys.stdin.isatty():
        raise UsageError("not a terminal: pass --yes to start without a prompt")
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
