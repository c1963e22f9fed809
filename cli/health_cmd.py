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
    import redis

    from joinops.settings import Secrets

    try:
        redis.Redis.from_url(Secrets().redis_url, socket_timeout=2).ping()
    except redis.RedisError as e:
        print(f"joinops: Redis does not answer: {type(e).__name__}", file=sys.stderr)
        return 1
    return 0
