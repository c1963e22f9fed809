"""`python -m bench [--quick] [--only NAMES] [--out DIR]` (what `make bench` runs).

Runs the benchmarks in order, prints the table, and writes bench/results/latest.json plus a
dated copy of the JSON and of the Markdown table (`--quick` writes latest-quick.json instead).
Exits 1 when a benchmark failed or was blocked.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench import ack, check_cost, drain, kubectl_drain, stitch
from bench.report import Figure, Report, Result
from bench.support import Footprint, machine, redis_url

RESULTS = Path(__file__).parent / "results"
ORDER = ("check_cost", "drain", "kubectl_drain", "stitch", "ack", "footprint")
MIB = 1024  # KiB per MiB
# The Helm chart's memory request and limit per container (helm/joinops/values.yaml), MiB.
CHART_MEMORY = {"bot": (128, 256), "worker": (192, 512)}


@dataclass(frozen=True)
class Plan:
    """Every size in one place: the full run stays under 10 minutes on 2 cores."""

    check: check_cost.Sizes
    drain: drain.Sizes
    kubectl_drain: kubectl_drain.Sizes
    stitch: stitch.Sizes
    ack: ack.Sizes


FULL = Plan(
    check=check_cost.Sizes(nodes=(10, 1_000, 10_000), repeats=5),
    drain=drain.Sizes(pods=100, grace=1.0, repeats=5, baseline_repeats=1),
    kubectl_drain=kubectl_drain.Sizes(pods=100, grace=1.0),
    stitch=stitch.Sizes(nodes=16, join_seconds=1.0, workers=4, max_parallel=4, repeats=3),
    ack=ack.Sizes(commands=500, concurrency=25, rounds=3, warmup=50, single=50),
)
QUICK = Plan(
    check=check_cost.Sizes(nodes=(10, 1_000), repeats=2),
    drain=drain.Sizes(pods=20, grace=0.2, repeats=2, baseline_repeats=1),
    kubectl_drain=kubectl_drain.Sizes(pods=20, grace=0.5),
    stitch=stitch.Sizes(nodes=4, join_seconds=0.2, workers=2, max_parallel=2, repeats=1),
    ack=ack.Sizes(commands=100, concurrency=10, rounds=1, warmup=10, single=10),
)


def footprint_result(footprint: Footprint) -> Result:
    result = Result(
        "footprint",
        "Footprint",
        params={"source": "VmHWM from /proc/<pid>/status, read just before each process ends"},
        samples={"peak_kib": footprint.peak_kib, "idle_kib": footprint.idle_kib},
    )
    for role, during in (("bot", "the ack benchmark"), ("worker", "the stitch benchmark")):
        peak = footprint.peak_kib.get(role)
        if peak is None:
            continue
        idle = footprint.idle_kib.get(role, 0)
        request, limit = CHART_MEMORY[role]
        result.figures.append(
            Figure(
                f"peak RSS of a {role} during {during}",
                peak / MIB,
                "MiB",
                f"after start-up: {idle / MIB:.0f} MiB; chart request {request} MiB, "
                f"limit {limit} MiB",
                "within request" if peak / MIB <= request else "over request",
            )
        )
    return result


def blocked_ack() -> str | None:
    """Why the ack benchmark cannot run yet, if it cannot."""
    for module in ("bot.serve", "cli.serve_cmd"):
        if importlib.util.find_spec(module) is None:
            return f"{module} does not exist yet: `joinops serve --http` cannot run"
    return None


def run_all(plan: Plan, only: set[str]) -> list[Result]:
    footprint = Footprint()
    url = redis_url() if only & {"stitch", "ack"} else ""
    steps: dict[str, Callable[[], Result]] = {
        "check_cost": lambda: check_cost.run(plan.check),
        "drain": lambda: drain.run(plan.drain),
        "kubectl_drain": lambda: kubectl_drain.run(plan.kubectl_drain),
        "stitch": lambda: stitch.run(plan.stitch, url, footprint),
        "ack": lambda: ack.run(plan.ack, url, footprint),
    }
    results = []
    for name in ORDER:
        if name not in only:
            continue
        if name == "footprint":
            results.append(footprint_result(footprint))
            continue
        print(f"bench: {name} ...", file=sys.stderr, flush=True)
        started = time.perf_counter()
        why = blocked_ack() if name == "ack" else None
        if why is not None:
            result = Result(name, name, status="blocked", note=why)
        else:
            try:
                result = steps[name]()
            except Exception as e:
                traceback.print_exc()
                result = Result(name, name, status="failed", note=f"{type(e).__name__}: {e}")
        result.seconds = round(time.perf_counter() - started, 1)
        print(f"bench: {name} took {result.seconds:.0f} s", file=sys.stderr, flush=True)
        results.append(result)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat: a smoke run")
    parser.add_argument(
        "--only",
        default=",".join(ORDER),
        help=f"comma-separated benchmarks to run (default: all: {','.join(ORDER)})",
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write the results")
    args = parser.parse_args(argv)
    only = {name.strip() for name in args.only.split(",") if name.strip()}
    unknown = only - set(ORDER)
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
    report = Report("quick" if args.quick else "full", machine(), [])
    started = time.perf_counter()
    report.results = run_all(QUICK if args.quick else FULL, only)
    report.seconds = time.perf_counter() - started
    report.machine["load_average_end"] = round(os.getloadavg()[0], 2)
    print(report.markdown())
    for path in report.write(args.out):
        print(f"wrote {path}", file=sys.stderr)
    return 0 if all(r.status == "ok" for r in report.results) else 1


if __name__ == "__main__":
    sys.exit(main())
