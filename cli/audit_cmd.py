"""`joinops audit [--since 1h] [--json]`: the audit trail, oldest first."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from typing import Any

import redis

from cli.common import duration
from joinops.requests.audit import AuditLog, Entry
from joinops.settings import Secrets


def register(sub: Any) -> None:
    p = sub.add_parser("audit", help="print the audit trail: requests, approvals, outcomes")
    p.add_argument(
        "--since",
        type=duration,
        metavar="AGE",
        help="only entries younger than this (e.g. 30m, 24h)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    connection = redis.Redis.from_url(Secrets().redis_url)
    since = time.time() - args.since.total_seconds() if args.since else 0.0
    for entry in AuditLog(connection).entries(since=since):
        print(json.dumps(asdict(entry)) if args.json else render(entry))
    return 0


def render(entry: Entry) -> str:
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.at))
    what = f"{entry.node} {entry.source}->{entry.target}" if entry.node else ""
    role = f" as {entry.role}" if entry.role else ""
    role += " (forced)" if entry.force else ""
    detail = f": {entry.detail}" if entry.detail else ""
    return f"{stamp} {entry.action:<9} {entry.request_id:<12} by {entry.actor} {what}{role}{detail}"
