"""`joinops list`: the active requests (pending, approved, running), oldest first."""

from __future__ import annotations

import argparse
from typing import Any

from cli import texts
from cli.requests import Requests
from cli.status_cmd import headline


def register(sub: Any) -> None:
    p = sub.add_parser("list", help="the active requests: pending, approved or running")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    active = [r for r in Requests.open().store.active() if not r.parent]
    if not active:
        print(texts.none_active())
    for request in active:
        print(headline(request))
    return 0
