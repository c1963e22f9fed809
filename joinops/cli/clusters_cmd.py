"""`joinops clusters`: each configured cluster, its version, size and reachability."""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

from joinops.cli.common import load
from joinops.clusters import ClusterRegistry
from joinops.errors import ConfigError, JoinopsError


@dataclass(frozen=True)
class ClusterRow:
    name: str
    reachable: bool
    version: str = ""
    nodes: int | None = None
    control_planes: int | None = None
    endpoint: str = ""
    problem: str = ""


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


def survey(registry: ClusterRegistry) -> list[ClusterRow]:
    """One row per cluster, read in parallel; one broken cluster does not break the others."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(lambda name: _row(registry, name), registry.names))


def _row(registry: ClusterRegistry, name: str) -> ClusterRow:
    try:
        cluster = registry.get(name)
        facts = cluster.facts()
        nodes = cluster.call("list", "nodes", cluster.core.list_node, limit=1)
        total = len(nodes.items) + int(nodes.metadata.remaining_item_count or 0)
    except ConfigError as e:
        return ClusterRow(name, False, problem=str(e))
    except JoinopsError as e:
        return ClusterRow(name, False, problem=getattr(e, "detail", str(e)))
    return ClusterRow(
        name,
        True,
        str(facts.version),
        total,
        len(facts.control_planes),
        facts.control_plane_endpoint or facts.server,
    )


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
