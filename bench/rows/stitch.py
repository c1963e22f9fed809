"""Rows: N single-node clusters stitched into one, as one batch against one after another."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from bench import stitch
from bench.report import Result, Row, Target, make_row
from bench.support import CpuShare, Env, median

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
CPU_BOUND = 0.9  # both cores at least this busy during a batch: its wall time is CPU time


def row(env: Env) -> Result:
    sizes = QUICK if env.quick else FULL
    result = stitch.run(sizes, env.redis_url, env.footprint)
    samples = result.samples
    ours, serial = median(samples["batch_seconds"]), median(samples["serial_seconds"])
    batch_cpu = _median_run_cpu(samples["batch_seconds"], samples.get("batch_cpu", []))
    result.rows += [
        _why_missed(
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
            _cpu_words(batch_cpu),
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
        cpu = {int(n): c for n, c in samples.get("curve_cpu", []) if c}
        per_slot = math.ceil(64 / sizes.max_parallel)  # migrations one after another per slot
        floor = per_slot * serial / sizes.nodes  # each as long as one alone, same run
        why = (
            f"max_parallel {sizes.max_parallel} runs 64 nodes as {per_slot} migrations one "
            f"after another in each slot: at best {per_slot} x {serial / sizes.nodes:.2f} s "
            f"(one alone, same run) = {floor:.1f} s, {floor / curve[16]:.1f}x the 16-cluster "
            "time"
        )
        if 64 in cpu:
            why += f"; {_cpu_words(CpuShare(**cpu[64]))}"
        result.rows.append(
            _why_missed(
                make_row(
                    f"64 clusters into one (curve {shape})",
                    curve[64],
                    "s",
                    "16 clusters, same run",
                    curve[16],
                    target=Target("ratio", "<=", CURVE_RATIO),
                ),
                why,
            )
        )
    return result


def _median_run_cpu(seconds: list[float], cpu: list[dict[str, Any] | None]) -> CpuShare | None:
    """Where the CPU went in the run of median wall time."""
    runs = sorted((t, c) for t, c in zip(seconds, cpu, strict=False) if c)
    return CpuShare(**runs[len(runs) // 2][1]) if runs else None


def _cpu_words(cpu: CpuShare | None) -> str:
    """Whether the cores were the limit, from the run's own CPU measurement."""
    if cpu is None:
        return ""
    return f"{'CPU-bound' if cpu.busy >= CPU_BOUND else 'not CPU-bound'}: {cpu.words()}"


def _why_missed(row: Row, why: str) -> Row:
    """The row, saying why when it misses its target."""
    if not why or not row.verdict.startswith("missed"):
        return row
    return dataclasses.replace(row, note=why)
