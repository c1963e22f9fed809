"""Rows: joinops's drain against one pod at a time and against one grace period."""

from __future__ import annotations

from bench import drain
from bench.report import Result, make_row
from bench.support import Env, median

NAME = "drain"
FULL = drain.Sizes(pods=100, grace=1.0, repeats=5, baseline_repeats=1)
QUICK = drain.Sizes(pods=20, grace=0.2, repeats=2, baseline_repeats=1)


def row(env: Env) -> Result:
    sizes = QUICK if env.quick else FULL
    result = drain.run(sizes)
    ours = median(result.samples["joinops_seconds"])
    result.rows += [
        make_row(
            f"drain {sizes.pods} pods, {sizes.grace:g} s grace",
            ours,
            "s",
            "one pod at a time",
            median(result.samples["baseline_seconds"]),
            ratio_kind="faster",
        ),
        make_row(f"drain {sizes.pods} pods, its floor", ours, "s", "one grace", sizes.grace),
    ]
    return result
