"""`joinops serve [--http --port PORT]`: run the Slack bot (see docs/slack.md): the acking
process, which starts its post-ack process (`--post-ack`, bot/post_ack_process.py)."""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from typing import Any

from joinops.settings import load_settings

MULTIPROC_DIR = "PROMETHEUS_MULTIPROC_DIR"  # joinops.metrics's, not imported here: see below


def register(sub: Any) -> None:
    p = sub.add_parser(
        "serve",
        help="run the Slack bot: Socket Mode when SLACK_APP_TOKEN is set, or HTTP with --http",
    )
    p.add_argument(
        "--http",
        action="store_true",
        help="serve Slack's requests over HTTP at POST /slack/events (and GET /healthz)",
    )
    p.add_argument("--port", type=int, default=3000, help="HTTP port (default 3000)")
    p.add_argument("--host", default="0.0.0.0", help="HTTP address (default 0.0.0.0)")
    p.add_argument(
        "--threads", type=int, default=16, help="HTTP requests served at once (default 16)"
    )
    p.add_argument("--metrics-port", type=int, help="serve Prometheus metrics on this port")
    p.add_argument(
        "--health-port",
        type=int,
        help="serve GET /livez and /readyz on this port (the probes; Socket Mode has no other)",
    )
    p.add_argument(
        "--drain-seconds",
        type=_seconds,
        default=0.0,
        help="on SIGTERM, keep answering (not ready) this long before stopping, while the "
        "Service and the Ingress let go of this replica (default 0; the chart sets it)",
    )
    p.add_argument(
        "--post-ack-priority",
        type=_priority,
        default=10,
        metavar="idle|0-19",
        help="the post-ack process's CPU priority below the acks: `idle` (Linux SCHED_IDLE: "
        "only CPU the acks leave; for a container of its own, as the chart runs it) or a "
        "niceness added to the acking process's (default 10)",
    )
    p.add_argument("--post-ack", action="store_true", help=argparse.SUPPRESS)
    p.add_argument(
        "--log-format",
        choices=("json", "text"),
        help="log lines as JSON objects or plain text (default: text at a terminal, else JSON)",
    )
    p.set_defaults(run=run)


def _metrics_shared_with_post_ack() -> str | None:
    """The post-ack process counts too (requests recorded, Slack errors), and only the acking
    process serves /metrics: both write their values to one directory (prometheus_client's
    multiprocess mode; the post-ack process inherits the environment) and /metrics sums them.
    Set before prometheus_client is imported, which reads it then; a fresh directory per start
    (the values of an earlier run's processes are not this run's). Returns the directory when
    it was made here, for the stop to remove it."""
    if os.environ.get(MULTIPROC_DIR):
        return None
    made = tempfile.mkdtemp(prefix="joinops-metrics-")
    os.environ[MULTIPROC_DIR] = made
    return made


def _seconds(value: str) -> float:
    from cli import texts

    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:  # NaN too
        raise argparse.ArgumentTypeError(texts.bad_seconds(value))
    return seconds


def _priority(value: str) -> str | int:
    from bot.post_ack_priority import parse
    from cli import texts

    try:
        return parse(value)
    except ValueError:
        raise argparse.ArgumentTypeError(texts.bad_priority(value)) from None


def run(args: argparse.Namespace) -> int:
    made = _metrics_shared_with_post_ack() if args.metrics_port and not args.post_ack else None
    try:
        return _run(args)
    finally:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)


def _run(args: argparse.Namespace) -> int:
    from joinops import logs

    logs.configure("INFO", json_lines=logs.json_wanted(args.log_format))
    if args.post_ack:  # the acking process's companion (bot/companion.py), not for people
        from bot.post_ack_process import run as post_ack

        return post_ack(load_settings(), args.post_ack_priority)
    from bot.serve import run as serve

    return serve(
        load_settings(),
        http=args.http,
        host=args.host,
        port=args.port,
        threads=args.threads,
        metrics_port=args.metrics_port,
        health_port=args.health_port,
        drain_seconds=args.drain_seconds,
        companion_args=_companion_args(args),
    )


def _companion_args(args: argparse.Namespace) -> list[str]:
    """What the post-ack process is started with, beyond `--post-ack`."""
    passed = ["--post-ack-priority", str(args.post_ack_priority)]
    return passed + (["--log-format", args.log_format] if args.log_format else [])
