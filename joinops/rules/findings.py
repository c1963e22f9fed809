"""What a rule check says: a list of findings, refusals first."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import IntEnum
from typing import Any


class Severity(IntEnum):
    """Ordered so that sorting puts refusals first."""

    REFUSAL = 0  # the migration may not happen
    WARNING = 1  # it may, but an operator should read this first
    NOTE = 2  # for the record


@dataclass(frozen=True)
class Finding:
    severity: Severity
    code: str  # stable id, e.g. "version-skew", for tests, metrics and JSON output
    text: str  # what an operator reads: what is wrong and what to do

    def as_dict(self) -> dict[str, str]:
        return {"severity": self.severity.name.lower(), "code": self.code, "text": self.text}


def refusals(findings: tuple[Finding, ...] | list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity is Severity.REFUSAL]


def ordered(findings: list[Finding]) -> tuple[Finding, ...]:
    return tuple(sorted(findings, key=lambda f: f.severity))


def stored_findings(verdict: Any) -> str:
    """A verdict's findings as a request stores them (`extra["findings"]`, read by the bot)."""
    return json.dumps([[f.severity.name, f.text] for f in verdict.findings])
