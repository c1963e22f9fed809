"""`joinops arrivals [--json]`: the hosts seen in the hosts directory, the first seen first."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from typing import Any

import redis

from cli import texts
from cli.common import load
from joinops.arrivals import listing
from joinops.arrivals.store import ArrivalStore
from joinops.settings import Secrets

HEADER = ("CLUSTER", "FILE", "SINCE", "STATE", "REQUEST")


def register(sub: Any) -> None:
    p = sub.add_parser("arrivals", help="the hosts seen in the hosts directory, and their state")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    settings, registry = load()
    config, directory = settings.arrivals, registry.hosts
    if config is None or directory is None:
        if not args.json:
            print(texts.arrivals_not_configured())
        return 0
    store = ArrivalStore(redis.Redis.from_url(Secrets().redis_url))
    rows = listing.rows(store, directory.scan())
    if args.json:
        for row in rows:
            print(json.dumps(asdict(row)))
    elif not rows:
        print(texts.no_arrivals(str(config.directory), config.channel))
    else:
        print(render(rows))
    return 0


def render(rows: list[listing.Row]) -> str:
    table = [HEADER] + [
        (r.cluster, r.file, _when(r.first_seen), r.state, r.request_id or "-") for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(HEADER))]
    lines = []
    for row, note in zip(table, ("", *(r.note for r in rows)), strict=True):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if note:
            lines.append(texts.arrival_note(note))
    return "\n".join(lines)


def _when(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(timestamp))
