"""Results: figures with what each is compared against, printed as a table and kept as JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SCHEMA = 1


@dataclass(frozen=True)
class Figure:
    """One number, and what it is measured against."""

    name: str  # e.g. "p99 time to the HTTP response"
    value: float | None  # in `unit`; None when it could not be measured
    unit: str  # ms, s, x (a ratio), requests, bytes, MiB
    compared_to: str  # the baseline or target, in words, with its value
    verdict: str = ""  # e.g. "flat", "below target", "near the floor"


@dataclass
class Result:
    """One benchmark's outcome. `status` is ok, blocked (could not run) or failed."""

    name: str  # stable key: check_cost, drain, stitch, footprint, ack
    title: str
    params: dict[str, Any] = field(default_factory=dict)  # what was run: sizes, durations
    figures: list[Figure] = field(default_factory=list)
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
        rows = [("Benchmark", "Figure", "joinops", "Compared against", "Verdict")]
        for result in self.results:
            if result.status != "ok":
                rows.append((result.title, "—", result.status, result.note, ""))
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
        lines = [f"_{self.heading()}_", ""]
        lines.append("| " + " | ".join(rows[0]) + " |")
        lines.append("|" + "|".join(["---"] * len(rows[0])) + "|")
        lines += ["| " + " | ".join(cell.replace("|", "/") for cell in r) + " |" for r in rows[1:]]
        return "\n".join(lines)


def format_value(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit == "x":
        return f"{value:.1f}x"
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
