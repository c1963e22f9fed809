"""Results: rows (joinops, peer, ratio, target) and the figures behind them, as a table and JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SCHEMA = 2  # 2: results carry `rows` (joinops, peer, ratio, target)


@dataclass(frozen=True)
class Figure:
    """One number, and what it is measured against."""

    name: str  # e.g. "p99 time to the HTTP response"
    value: float | None  # in `unit`; None when it could not be measured
    unit: str  # ms, s, x (a ratio), requests, bytes, MiB
    compared_to: str  # the baseline or target, in words, with its value
    verdict: str = ""  # e.g. "flat", "below target", "near the floor"


@dataclass(frozen=True)
class Target:
    """What a row must reach: `on` the joinops figure or on the ratio, `op` <= or >=."""

    on: str  # "joinops" or "ratio"
    op: str  # "<=" or ">="
    bound: float
    unit: str = ""  # the bound's unit when `on` is joinops (the ratio's is x)

    def text(self) -> str:
        sign = "≤" if self.op == "<=" else "≥"
        what = "ratio" if self.on == "ratio" else "joinops"
        bound = f"{self.bound:g}x" if self.on == "ratio" else format_value(self.bound, self.unit)
        return f"{what} {sign} {bound}"

    def judge(self, value: float | None) -> str:
        """ "met", or "missed by" how much (in the bound's unit)."""
        if value is None:
            return "not measured"
        short = self.bound - value if self.op == ">=" else value - self.bound
        if short <= 0:
            return "met"
        unit = "x" if self.on == "ratio" else self.unit
        return f"missed by {format_value(short, unit)}"


@dataclass(frozen=True)
class Row:
    """One line of the table: joinops, the peer or floor measured in the same run, their
    ratio, and the target. Build it with `make_row()`, which works out the ratio and the verdict."""

    name: str  # what is measured, e.g. "16 clusters into one, wall time"
    joinops: float | None
    unit: str
    peer: str  # the peer or floor, in words, e.g. "one after another"
    peer_value: float | None  # in `unit`; None when there is no peer to measure
    ratio: float | None  # see `ratio_kind`
    ratio_kind: str  # "faster": peer / joinops; "of": joinops / peer
    target: Target | None
    verdict: str  # met / missed by … / "" when the row has no target
    note: str = ""  # why a target is missed, from a measurement


def make_row(
    name: str,
    joinops: float | None,
    unit: str,
    peer: str,
    peer_value: float | None,
    *,
    ratio_kind: str = "of",
    target: Target | None = None,
    note: str = "",
) -> Row:
    """A row, its ratio (joinops / peer, or peer / joinops for `faster`) and its verdict."""
    ratio = None
    if joinops is not None and peer_value is not None:
        top, bottom = (peer_value, joinops) if ratio_kind == "faster" else (joinops, peer_value)
        ratio = top / bottom if bottom else None
    verdict = ""
    if target is not None:
        verdict = target.judge(ratio if target.on == "ratio" else joinops)
    return Row(name, joinops, unit, peer, peer_value, ratio, ratio_kind, target, verdict, note)


@dataclass
class Result:
    """One benchmark's outcome. `status` is ok, blocked (could not run) or failed."""

    name: str  # stable key: check_cost, drain, stitch, footprint, ack
    title: str
    params: dict[str, Any] = field(default_factory=dict)  # what was run: sizes, durations
    figures: list[Figure] = field(default_factory=list)  # the details behind the rows
    rows: list[Row] = field(default_factory=list)  # the table's lines
    samples: dict[str, Any] = field(default_factory=dict)  # raw measurements, every repeat
    status: str = "ok"
    note: str = ""
    seconds: float = 0.0  # how long the benchmark took to run


@dataclass
class Report:
    mode: str  # full or quick
    machine: dict[str, Any]
    results: list[Result]
    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    seconds: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "date": self.started.isoformat(timespec="seconds"),
            "mode": self.mode,
            "machine": self.machine,
            "seconds": round(self.seconds, 1),
            "results": [asdict(r) for r in self.results],
        }

    def write(self, directory: Path) -> list[Path]:
        """latest.json, and a dated copy of the JSON and of the Markdown table."""
        directory.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.as_json(), indent=2) + "\n"
        stamp = self.started.strftime("%Y-%m-%d")
        suffix = "" if self.mode == "full" else f"-{self.mode}"
        latest = directory / ("latest.json" if self.mode == "full" else f"latest{suffix}.json")
        dated = directory / f"{stamp}{suffix}.json"
        table = directory / f"{stamp}{suffix}.md"
        latest.write_text(text)
        dated.write_text(text)
        table.write_text(self.markdown() + "\n")
        return [latest, dated, table]

    def heading(self) -> str:
        m = self.machine
        load = f"load average {m['load_average']}"
        if "load_average_end" in m:
            load += f" → {m['load_average_end']}"
        return (
            f"{self.started:%Y-%m-%d}, {m['nproc']} CPUs ({m['cpu']}), Python {m['python']}, "
            f"{self.mode} run, {self.seconds:.0f} s, {load}"
        )

    def markdown(self) -> str:
        """The table of rows (joinops, peer, ratio, target), then the details behind them."""
        lines = [f"_{self.heading()}_", "", *self.rows_table(), "", "Details:", ""]
        lines += self.details_table()
        return "\n".join(lines)

    def rows_table(self) -> list[str]:
        rows = [ROW_HEADER]
        for result in self.results:
            if result.status != "ok":
                rows.append((result.title, result.status, result.note, "", "", ""))
                continue
            for line in result.rows:
                missed = line.note and line.verdict.startswith("missed")
                verdict = line.verdict + (f": {line.note}" if missed else "")
                rows.append(
                    (
                        line.name,
                        format_value(line.joinops, line.unit),
                        _peer_cell(line),
                        _ratio_cell(line),
                        line.target.text() if line.target else "—",
                        verdict or "—",
                    )
                )
        return _table(rows)

    def details_table(self) -> list[str]:
        rows = [("Benchmark", "Figure", "joinops", "Compared against", "Verdict")]
        for result in self.results:
            if result.status != "ok":
                continue
            for i, fig in enumerate(result.figures):
                rows.append(
                    (
                        result.title if i == 0 else "",
                        fig.name,
                        format_value(fig.value, fig.unit),
                        fig.compared_to,
                        fig.verdict,
                    )
                )
        return _table(rows)


ROW_HEADER = ("Row", "joinops", "Peer or floor (same run)", "Ratio", "Target", "Verdict")


def _table(rows: Sequence[tuple[str, ...]]) -> list[str]:
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "|".join(["---"] * len(rows[0])) + "|"]
    lines += ["| " + " | ".join(_cell(cell) for cell in r) + " |" for r in rows[1:]]
    return lines


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "/")  # one line, no column breaks


def _peer_cell(line: Row) -> str:
    if line.peer_value is None:
        return line.peer or "—"
    return f"{line.peer}: {format_value(line.peer_value, line.unit)}"


def _ratio_cell(line: Row) -> str:
    if line.ratio is None:
        return "—"
    if line.ratio_kind == "faster":
        return f"{line.ratio:.1f}x faster"
    return f"{line.ratio:.2f}x"


def format_value(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit == "x":
        return f"{value:.2f}x" if abs(value) < 0.1 else f"{value:.1f}x"  # never "missed by 0.0x"
    if unit == "ms":
        return f"{value:.1f} ms"
    if unit == "s":
        return f"{value:.2f} s"
    if unit == "MiB":
        return f"{value:.0f} MiB"
    if unit == "bytes":
        return f"{value:,.0f} B"
    text = f"{value:,.1f}" if value != int(value) else f"{value:,.0f}"
    return f"{text} {unit}".rstrip()
