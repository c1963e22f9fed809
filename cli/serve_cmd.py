"""`joinops serve [--http --port PORT]`: run the Slack bot (see docs/slack.md)."""

from __future__ import annotations

import argparse
from typing import Any

from joinops.settings import load_settings


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
        "--log-format",
        choices=["json", "text"],
        default="json",
        help="log lines as JSON objects (default) or plain text",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from bot.serve import run as serve
    from joinops import logs

    logs.configure("INFO", json_lines=args.log_format == "json")
    return serve(
        load_settings(),
        http=args.http,
        host=args.host,
        port=args.port,
        threads=args.threads,
        metrics_port=args.metrics_port,
        health_port=args.health_port,
    )
