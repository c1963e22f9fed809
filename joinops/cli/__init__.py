"""The `joinops` command line. Each subcommand lives in its own module; heavy imports are lazy."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from types import ModuleType

from joinops.cli import clusters_cmd, plan_cmd
from joinops.errors import ConfigError, UsageError

EXIT_OK, EXIT_REFUSED, EXIT_USAGE = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="joinops",
        description="Move Kubernetes nodes between kubeadm clusters, safely.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    plan_cmd.register(sub)
    clusters_cmd.register(sub)
    for module in _optional_commands():
        module.register(sub)
    return parser


def _optional_commands() -> list[ModuleType]:
    """Subcommands added by later modules; imported here so `--help` lists them."""
    from joinops.cli import ignition_cmd, migrate_cmd, sandbox_cmd, serve_cmd, worker_cmd

    return [migrate_cmd, worker_cmd, serve_cmd, sandbox_cmd, ignition_cmd]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except (ConfigError, UsageError) as e:
        print(f"joinops: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
