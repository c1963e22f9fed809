"""Rows: peak resident memory of the bot (during the ack rows) and of each worker (during the
stitch rows), against the same process just after start-up. Reads what those rows sampled, so
it comes after them in ROWS."""

from __future__ import annotations

from bench.report import Figure, Result, Target, make_row
from bench.support import Env

NAME = "footprint"
MIB = 1024  # KiB per MiB
MB = 1000 * 1000 / (1024 * 1024)  # MiB per MB
# The Helm chart's memory request and limit per container (helm/joinops/values.yaml), MiB.
CHART_MEMORY = {"bot": (256, 512), "worker": (192, 512)}
# Issue 16: a worker stays within 150 MB throughout; the bot within the chart's request.
TARGET_MIB = {"bot": 256.0, "worker": 150 * MB}
DURING = {"bot": "the ack rows", "worker": "the stitch rows"}


def row(env: Env) -> Result:
    footprint = env.footprint
    result = Result(
        NAME,
        "Footprint",
        params={"source": "VmHWM from /proc/<pid>/status, read just before each process ends"},
        samples={"peak_kib": footprint.peak_kib, "idle_kib": footprint.idle_kib},
    )
    for role in ("bot", "worker"):
        peak = footprint.peak_kib.get(role)
        if peak is None:
            continue
        idle = footprint.idle_kib.get(role, 0)
        request, limit = CHART_MEMORY[role]
        result.rows.append(
            make_row(
                f"peak RSS of a {role} during {DURING[role]}",
                peak / MIB,
                "MiB",
                "the same process after start-up",
                idle / MIB,
                target=Target("joinops", "<=", TARGET_MIB[role], "MiB"),
            )
        )
        result.figures.append(
            Figure(
                f"peak RSS of a {role} during {DURING[role]}",
                peak / MIB,
                "MiB",
                f"after start-up: {idle / MIB:.0f} MiB; chart request {request} MiB, "
                f"limit {limit} MiB",
                "within request" if peak / MIB <= request else "over request",
            )
        )
    return result
