"""`joinops migrate`: move one node, several, or every node of a cluster, and follow it.

joinops migrate NODE --from SRC --to DST [--as ROLE] [--force] [--yes]
joinops migrate NODE NODE... [--from SRC] --to DST [--as ROLE] [--force] [--yes]
joinops migrate --all --from SRC --to DST [--force] [--yes]
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

import redis

from cli.common import add_force_argument, add_role_argument, load
from cli.plan_cmd import render
from cli.terminal import TerminalReporter
from joinops.errors import UsageError
from joinops.queue import enqueue_batch_advance, enqueue_migration
from joinops.requests.asks import MigrationAsk, validate_ask
from joinops.requests.audit import Action, AuditLog
from joinops.requests.events import RedisEventLog
from joinops.requests.lifecycle import State
from joinops.requests.store import Request, RequestStore
from joinops.rules import batch as batches
from joinops.rules.check import check

WAITING_HINT_AFTER = 10  # idle seconds before saying that no worker has picked the job up


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


def _run_one(args: argparse.Namespace) -> int:
    settings, registry = load()
    ask = MigrationAsk(args.nodes[0], args.source, args.target, args.role, force=args.force)
    validate_ask(ask, registry.names)
    verdict = check(ask, registry.get(ask.source), registry.get(ask.target))
    print(render(verdict))
    if not verdict.allowed:
        return 1
    if not args.yes and not _confirmed(f"Move {ask.node} from {ask.source} to {ask.target}?"):
        print("Not started.")
        return 1
    connection = redis.Redis.from_url(settings.secrets.redis_url)
    user = _user()
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
    _audit_cli_start(connection, request)
    enqueue_migration(connection, settings, request.id)
    return _follow_or_return(args, connection, request.id)


def _run_batch(args: argparse.Namespace) -> int:
    settings, registry = load()
    if args.all:
        if args.source is None:
            raise UsageError("--all needs --from SRC")
        plan = batches.plan_all(args.source, args.target, registry, force=args.force)
    else:
        plan = batches.plan_nodes(
            args.nodes, args.source, args.target, args.role, registry, force=args.force
        )
    print(batches.render(plan))
    if not plan.allowed:
        return 1
    if not args.yes and not _confirmed(f"Move {len(plan.items)} nodes to {plan.target}?"):
        print("Not started.")
        return 1
    connection = redis.Redis.from_url(settings.secrets.redis_url)
    user = _user()
    batch = batches.create_batch(
        RequestStore(connection), plan, requester=user, decided_by=user, state=State.APPROVED
    )
    _audit_cli_start(connection, batch)
    enqueue_batch_advance(connection, batch.id)
    return _follow_or_return(args, connection, batch.id)


def _follow_or_return(args: argparse.Namespace, connection: redis.Redis, request_id: str) -> int:
    print(f"Request {request_id} queued.", flush=True)
    return 0 if args.no_follow else follow(connection, request_id)


def follow(connection: redis.Redis, request_id: str) -> int:
    """Print the request's events until it ends; 0 when it succeeded."""
    reporter, idle = TerminalReporter(), 0
    for event in RedisEventLog(connection).follow(request_id):
        if event is None:
            idle += 1
            if idle == WAITING_HINT_AFTER:
                print("No worker has started it yet: is `joinops worker` running?", flush=True)
            continue
        reporter.emit(event)
        if event.is_final:
            return 0 if event.state == State.SUCCEEDED else 1
    return 1


def _audit_cli_start(connection: redis.Redis, request: Request) -> None:
    """From the CLI, the operator's confirmation is both the request and the approval."""
    audit = AuditLog(connection)
    audit.record(Action.REQUESTED, request.requester, request)
    audit.record(Action.APPROVED, request.requester, request, "confirmed at the command line")


def _user() -> str:
    return f"cli:{getpass.getuser()}"


def _confirmed(question: str) -> bool:
    if not sys.stdin.isatty():
        raise UsageError("not a terminal: pass --yes to start without a prompt")
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
