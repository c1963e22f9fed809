"""Pieces the subcommands share."""

from __future__ import annotations

import argparse
from datetime import timedelta

from cli import texts
from joinops.clusters.registry import ClusterRegistry
from joinops.requests.model import Role
from joinops.settings import Settings, load_settings, parse_duration


def load() -> tuple[Settings, ClusterRegistry]:
    settings = load_settings()
    return settings, ClusterRegistry(settings)


def add_role_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--as",
        dest="role",
        type=role,
        default=Role.WORKER,
        metavar="ROLE",
        help="role in the target: worker (default) or control-plane",
    )


def role(value: str) -> Role:
    """argparse type of `--as`: the allowed roles named when the value is none of them."""
    try:
        return Role(value.strip().lower())
    except ValueError:
        raise argparse.ArgumentTypeError(texts.bad_role(value)) from None


def duration(value: str) -> timedelta:
    """argparse type of a duration: what to type when the value is not one."""
    try:
        return parse_duration(value)
    except ValueError:
        raise argparse.ArgumentTypeError(texts.bad_duration(value)) from None


def add_force_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--force",
        action="store_true",
        help="delete pods no controller will recreate, and pods on node-local volumes "
        "(as `kubectl drain --force`)",
    )
