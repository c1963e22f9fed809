"""`python -m bench [--quick] [--only NAMES] [--out DIR]` (what `make bench` runs).

Runs the benchmarks in order (bench/rows: one module per benchmark), prints the table and
writes bench/results/latest.json plus a dated copy of the JSON and of the Markdown table
(`--quick` writes latest-quick.json instead).
Exits 1 when a benchmark failed or was blocked.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path

from bench.report import Report, Result
from bench.rows import ROWS
from bench.support import Env, machine

RESULTS = Path(__file__).parent / "results"
ORDER = tuple(module.NAME for module in ROWS)


def run_all(env: Env, only: set[str]) -> list[Result]:
    results = []
    for module in ROWS:
        name = module.NAME
        if name not in only:
            continue
        print(f"bench: {name} ...", file=sys.stderr, flush=True)
        started = time.perf_counter()
        try:
            result = module.row(env)
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
    env = Env(quick=args.quick)
    try:
        report.results = run_all(env, only)
    finally:
        env.close()
    report.seconds = time.perf_counter() - started
    report.machine["load_average_end"] = round(os.getloadavg()[0], 2)
    print(report.markdown())
    for path in report.write(args.out):
        print(f"wrote {path}", file=sys.stderr)
    return 0 if all(r.status == "ok" for r in report.results) else 1


if __name__ == "__main__":
    sys.exit(main())
