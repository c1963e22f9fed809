"""Rows: joinops's drain against `kubectl drain` and against every pod evicted at once."""

from __future__ import annotations

from bench import kubectl_drain
from bench.report import Result, Target, make_row
from bench.support import Env

NAME = "kubectl_drain"
FULL = kubectl_drain.Sizes(pods=100, grace=1.0)
QUICK = kubectl_drain.Sizes(pods=20, grace=0.5)


def row(env: Env) -> Result:
    sizes = QUICK if env.quick else FULL
    result = kubectl_drain.run(sizes)
    ours = result.samples["joinops_seconds"][0]
    result.rows += [
        make_row(
            f"drain {sizes.pods} Deployment pods, {sizes.grace:g} s grace",
            ours,
            "s",
            "kubectl drain (v1.37)",
            result.samples["kubectl_seconds"][0],
            ratio_kind="faster",
            target=Target("ratio", ">=", 5),
        ),
        make_row(
            f"drain {sizes.pods} Deployment pods, against one grace",
            ours,
            "s",
            "one grace",
            sizes.grace,
            target=Target("ratio", "<=", 1.3),
            note=_floor_words(result.samples, sizes.grace),
        ),
        make_row(
            f"drain {sizes.pods} Deployment pods, against the naive floor",
            ours,
            "s",
            "every pod evicted at once",
            result.samples["floor_seconds"][0],
        ),
    ]
    return result


def _floor_words(samples: dict[str, list[float]], grace: float) -> str:
    """What the simulated server itself allows, measured in the same run."""
    floor = samples["floor_seconds"][0]
    return (
        f"one grace plus {samples['joinops_seconds'][0] - grace:.2f} s of API round trips for "
        f"the evictions and the watch; every pod evicted at once, with no checks, took "
        f"{floor:.2f} s ({floor / grace:.2f} graces, the floor row) on the same server"
    )
