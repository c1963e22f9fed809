"""`joinops clusters`: each configured cluster, its version, size and reachability."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import Any

from cli.common import load
from joinops.clusters.survey import ClusterRow, survey


def register(sub: Any) -> None:
    p = sub.add_parser("clusters", help="list the configured clusters and whether they answer")
    p.add_argument("--json", action="store_true", help="print as JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    _, registry = load()
    rows = survey(registry)
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=2))
    else:
        print(render(rows))
    return 0


def render(rows: list[ClusterRow]) -> str:
    header = ("CLUSTER", "VERSION", "NODES", "CONTROL-PLANES", "ENDPOINT", "STATUS")
    table = [header] + [
        (
            r.name,
            r.version or "-",
            _n(r.nodes),
            _n(r.control_planes),
            r.endpoint or "-",
            "reachable" if r.reachable else f"UNREACHABLE: {r.problem}",
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row[:-1], widths, strict=True)) + "  " + row[-1]
        for row in table
    )


def _n(value: int | None) -> str:
    return "-" if value is None else str(value)
