"""The table's rows, one module per benchmark, in the order `make bench` runs them.

Each module exposes `NAME` (the `--only` key), `FULL` and `QUICK` (its sizes) and
`row(env) -> Result`, a Result whose `rows` are the table's lines (`bench.report.make_row`: joinops,
the peer or floor measured in the same run, their ratio and the target). To add a row: write
bench/rows/<name>.py and list it in ROWS below.
"""

from __future__ import annotations

from types import ModuleType

from bench.rows import ack, check_cost, drain, footprint, kubectl_drain, relay, stitch

ROWS: tuple[ModuleType, ...] = (check_cost, drain, kubectl_drain, stitch, ack, relay, footprint)
