"""Rows: N single-node clusters stitched into one, as one batch against one after another."""

from __future__ import annotations

from bench import stitch
from bench.report import Result, Target, make_row
from bench.support import Env, median

NAME = "stitch"
# The chart's default worker count (helm/joinops/values.yaml: worker.replicas) and the issue's
# max_parallel 16.
FULL = stitch.Sizes(
    nodes=16, join_seconds=1.0, workers=2, max_parallel=16, repeats=3, curve=(4, 16, 64)
)
QUICK = stitch.Sizes(nodes=4, join_seconds=0.2, workers=2, max_parallel=4, repeats=1)
SPEED_UP = 8.0  # at least this much faster than one after another (issue 16)
PLANNING_BUDGET = 8  # API requests per node to plan a batch (issue 16)
CURVE_RATIO = 2.0  # 64 clusters take at most this many times the 16-cluster wall time


def row(env: Env) -> Result:
    sizes = QUICK if env.quick else FULL
    result = stitch.run(sizes, env.redis_url, env.footprint)
    samples = result.samples
    ours, serial = median(samples["batch_seconds"]), median(samples["serial_seconds"])
    result.rows += [
        make_row(
            f"{sizes.nodes} clusters into one, {sizes.workers} workers, max_parallel "
            f"{sizes.max_parallel}",
            ours,
            "s",
            "one after another",
            serial,
            ratio_kind="faster",
            # the target is for 16 clusters or more; the quick run's 4 only smoke-test
            target=Target("ratio", ">=", SPEED_UP) if sizes.nodes >= 16 else None,
        ),
        make_row(
            f"{sizes.nodes} clusters into one, against the ideal",
            ours,
            "s",
            f"ideal: {stitch.rounds(sizes)} round(s) of one migration alone",
            stitch.ideal_seconds(sizes, serial),
        ),
        make_row(
            f"planning a {sizes.nodes}-cluster batch: API requests per node",
            median(samples["batch_planning_requests_per_node"]),
            "requests",
            "one rule check per node",
            median(samples["serial_planning_requests_per_node"]),
            target=Target("joinops", "<=", PLANNING_BUDGET, "requests"),
        ),
    ]
    curve = dict((int(n), float(t)) for n, t in samples["curve_seconds"])
    if 16 in curve and 64 in curve:
        shape = ", ".join(f"{n}: {t:.1f} s" for n, t in sorted(curve.items()))
        result.rows.append(
            make_row(
                f"64 clusters into one (curve {shape})",
                curve[64],
                "s",
                "16 clusters, same run",
                curve[16],
                target=Target("ratio", "<=", CURVE_RATIO),
            )
        )
    return result
