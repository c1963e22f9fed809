"""`joinops migrate NODE --from SRC --to DST [--as ROLE] [--yes]`: move a node, and follow it."""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

import redis

from joinops.asks import MigrationAsk, validate_ask
from joinops.cli.common import add_role_argument, load
from joinops.cli.plan_cmd import render
from joinops.errors import UsageError
from joinops.events import RedisEventLog
from joinops.lifecycle import State
from joinops.queue import enqueue_migration
from joinops.rules import check
from joinops.store import Request, RequestStore
from joinops.terminal import TerminalReporter

WAITING_HINT_AFTER = 10  # idle seconds before saying that no worker has picked the job up


def register(sub: Any) -> None:
    p = sub.add_parser("migrate", help="move a node to another cluster and follow its progress")
    p.add_argument("node", metavar="NODE", help="node name, exactly as `kubectl get nodes` shows")
    p.add_argument("--from", dest="source", required=True, metavar="SRC", help="source cluster")
    p.add_argument("--to", dest="target", required=True, metavar="DST", help="target cluster")
    add_role_argument(p)
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.add_argument(
        "--no-follow",
        action="store_true",
        help="print the request id and return once the job is queued",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    settings, registry = load()
    ask = MigrationAsk(args.node, args.source, args.target, args.role)
    validate_ask(ask, registry.names)
    verdict = check(ask, registry.get(ask.source), registry.get(ask.target))
    print(render(verdict))
    if not verdict.allowed:
        return 1
    if not args.yes and not _confirmed(ask):
        print("Not started.")
        return 1
    connection = redis.Redis.from_url(settings.secrets.redis_url)
    user = f"cli:{getpass.getuser()}"
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
        )
    )
    enqueue_migration(connection, settings, request.id)
    print(f"Request {request.id} queued.", flush=True)
    if args.no_follow:
        return 0
    return follow(connection, request.id)


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


def _confirmed(ask: MigrationAsk) -> bool:
    if not sys.stdin.isatty():
        raise UsageError("not a terminal: pass --yes to start the migration without a prompt")
    answer = input(f"Move {ask.node} from {ask.source} to {ask.target}? [y/N] ")
    return answer.strip().lower() in ("y", "yes")
