"""`joinops health`: a cheap liveness check for probes — Redis answers. No cluster is asked."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("health", help="exit 0 when Redis answers (for container probes)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return check()


def check() -> int:
    """0 when Redis answers a PING; otherwise 1, and which Redis (host:port) failed, and how."""
    import redis

    from cli import redis_reach
    from joinops.settings import Secrets

    url = Secrets().redis_url
    try:
        redis_reach.ping(url)
    except redis.RedisError as e:
        print(f"joinops: {redis_reach.unreachable(url, e)}", file=sys.stderr)
        return 1
    return 0
