"""Rows: what one rule check asks of the API servers, against one list of the nodes."""

from __future__ import annotations

from bench import check_cost
from bench.report import Result, Row, Target, make_row
from bench.support import Env

NAME = "check_cost"
FULL = check_cost.Sizes(
    nodes=(10, 1_000, 10_000),
    repeats=5,
    large=check_cost.Large(nodes=5_000, pods=150_000, volumes=2_000),  # about 1 min to build
)
QUICK = check_cost.Sizes(nodes=(10, 1_000), repeats=2)
CONTROL_PLANE_BUDGET = 10  # requests per check of a control-plane move (issue 16)
WORKER_BUDGET = 8  # requests per check of a worker move (issue 16)


def row(env: Env) -> Result:
    result = check_cost.run(QUICK if env.quick else FULL)
    costs = result.samples["costs"]
    smallest, largest = costs[0], costs[-1]
    result.rows += [
        make_row(
            f"check of a worker move, {largest['nodes']:,} nodes and pods: requests",
            largest["worker_requests"],
            "requests",
            f"the same check at {smallest['nodes']:,} nodes and pods",
            smallest["worker_requests"],
            target=Target("joinops", "<=", WORKER_BUDGET, "requests"),
        ),
        make_row(
            f"check of a control-plane move, {largest['nodes']:,} nodes: requests",
            largest["requests"],
            "requests",
            f"the same check at {smallest['nodes']:,} nodes",
            smallest["requests"],
            target=Target("joinops", "<=", CONTROL_PLANE_BUDGET, "requests"),
        ),
        make_row(
            f"check of a control-plane move, {largest['nodes']:,} nodes: bytes received",
            largest["bytes_received"],
            "bytes",
            "one list of the nodes",
            largest["list_bytes"],
        ),
    ]
    result.rows += _large_rows(
        result.samples.get("large"), result.samples.get("large_at_small_size")
    )
    return result


def _large_rows(large: dict[str, int] | None, small: dict[str, int] | None) -> list[Row]:
    """A source of 5,000 nodes and 150,000 pods: the check of a worker move with a claim, its
    lists (every PersistentVolume and DaemonSet) in pages of 500."""
    if large is None or small is None:
        return []
    size = f"{large['nodes']:,} nodes, {large['pods']:,} pods, {large['volumes']:,} volumes"
    return [
        make_row(
            f"check of a worker move with a claim, {size} (lists in pages of 500): requests",
            large["requests"],
            "requests",
            f"the same check at {small['nodes']} nodes, {small['pods']} pods, "
            f"{small['volumes']} volumes",
            small["requests"],
        ),
        make_row(
            f"check of a worker move with a claim, {size}: bytes received",
            large["bytes_received"],
            "bytes",
            "one list of the nodes",
            large["list_bytes"],
        ),
    ]
