"""`joinops worker [--burst]`: run the migration jobs."""

from __future__ import annotations

import argparse
from typing import Any

from joinops.settings import load_settings


def register(sub: Any) -> None:
    p = sub.add_parser("worker", help="run an RQ worker for migration jobs (with the scheduler)")
    p.add_argument("--burst", action="store_true", help="exit once the queue is empty")
    p.add_argument("--name", help="worker name (default: host and pid)")
    p.add_argument("--metrics-port", type=int, help="serve Prometheus metrics on this port")
    p.add_argument(
        "--log-format",
        choices=("json", "text"),
        help="log lines as JSON objects or plain text (default: text at a terminal, else JSON)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from joinops import logs
    from workers.main import run_worker

    run_worker(
        load_settings(),
        burst=args.burst,
        name=args.name,
        metrics_port=args.metrics_port,
        json_logs=logs.json_wanted(args.log_format),
    )
    return 0
