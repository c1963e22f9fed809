"""The `joinops` command line. Each subcommand lives in its own module; heavy imports are lazy."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from types import ModuleType

from joinops.errors import ConfigError, UsageError

EXIT_OK, EXIT_REFUSED, EXIT_USAGE = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="joinops",
        description="Move Kubernetes nodes between kubeadm clusters, safely.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in _commands():
        module.register(sub)
    return parser


def _version() -> str:
    """The installed distribution's version (the image's label and the chart's appVersion)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("joinops")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


def _commands() -> list[ModuleType]:
    """Every subcommand's module, imported only when a parser is needed."""
    from cli import (
        arrivals_cmd,
        audit_cmd,
        cancel_cmd,
        clusters_cmd,
        health_cmd,
        ignition_cmd,
        list_cmd,
        loans_cmd,
        migrate_cmd,
        plan_cmd,
        retry_cmd,
        sandbox_cmd,
        serve_cmd,
        status_cmd,
        worker_cmd,
    )

    return [
        plan_cmd,
        clusters_cmd,
        migrate_cmd,
        status_cmd,
        list_cmd,
        loans_cmd,
        arrivals_cmd,
        cancel_cmd,
        retry_cmd,
        worker_cmd,
        serve_cmd,
        sandbox_cmd,
        ignition_cmd,
        audit_cmd,
        health_cmd,
    ]


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list == ["health"]:  # probes run this often: skip loading the Kubernetes client
        from cli.health_cmd import check

        return check()
    try:
        args = build_parser().parse_args(args_list)  # imports every command: a second or more
    except KeyboardInterrupt:  # Ctrl-C before anything started: nothing to say
        return 130
    try:
        return int(args.run(args))
    except (ConfigError, UsageError) as e:
        print(f"joinops: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # only Redis being down is handled here; anything else re-raises
        if not _is_redis_down(e):
            raise
        print(f"joinops: {_redis_down_text(e)}", file=sys.stderr)
        return EXIT_REFUSED


def _is_redis_down(error: BaseException) -> bool:
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    return isinstance(error, RedisConnectionError | RedisTimeoutError)


def _redis_down_text(error: BaseException) -> str:
    """Where Redis was looked for (host and port only: the URL may hold a password) and why not."""
    import os

    from cli import redis_reach

    return redis_reach.unreachable(os.environ.get("REDIS_URL", "redis://localhost:6379/0"), error)
