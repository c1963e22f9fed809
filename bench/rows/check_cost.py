"""Rows: what one rule check asks of the API servers, against one list of the nodes."""

from __future__ import annotations

from bench import check_cost
from bench.report import Result, Target, make_row
from bench.support import Env

NAME = "check_cost"
FULL = check_cost.Sizes(nodes=(10, 1_000, 10_000), repeats=5)
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
    return result
