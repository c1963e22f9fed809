"""A batch as stored: its plan's table and findings, and its children.

A batch (kind `batch`, see `joinops.rules.batch`) keeps in `extra`, besides `children`:

- `rows`: the plan's table, JSON: per node its source, role, kubelet and target versions, the
  nodes it waits for, its findings and whether moving it empties its source;
- `batch_findings`: findings about the batch as a whole, JSON (refusals first).

Each child (an ordinary migration with `parent` = the batch) keeps `status_cell`, the STATUS
cell the relay writes while it runs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from joinops.requests.lifecycle import State
from joinops.requests.store import Request, RequestStore
from joinops.rules.batch import BatchPlan

ROWS = "rows"
FINDINGS = "batch_findings"
CHILDREN = "children"
STATUS_CELL = "status_cell"
CANCELLED_BY = "cancelled_by"


@dataclass(frozen=True)
class Row:
    node: str
    source: str
    role: str
    kubelet: str
    target_version: str
    after: tuple[str, ...]
    findings: tuple[tuple[str, str, str], ...]  # (severity name, code, text)
    destroys: bool = False
    forced: int = 0  # pods its forced drain deletes for good


def rows_of(plan: BatchPlan) -> list[Row]:
    return [
        Row(
            node=i.ask.node,
            source=i.ask.source,
            role=str(i.ask.role),
            kubelet=str(i.verdict.node.kubelet_version) if i.verdict.node else "",
            target_version=str(i.verdict.target.version) if i.verdict.target else "",
            after=tuple(i.after),
            findings=tuple((f.severity.name, f.code, f.text) for f in i.verdict.findings),
            destroys=i.verdict.destroys_source,
            forced=i.verdict.forced_deletions,
        )
        for i in plan.items
    ]


def plan_findings(plan: BatchPlan) -> list[tuple[str, str]]:
    return [(f.severity.name, f.text) for f in plan.findings]


def dump_rows(rows: Sequence[Row]) -> str:
    return json.dumps(
        [
            [
                *(r.node, r.source, r.role, r.kubelet, r.target_version),
                list(r.after),
                [list(f) for f in r.findings],
                r.destroys,
                r.forced,
            ]
            for r in rows
        ]
    )


def load_rows(batch: Request) -> list[Row]:
    try:
        raw = json.loads(batch.extra.get(ROWS) or "[]")
        return [
            Row(
                str(node),
                str(source),
                str(role),
                str(kubelet),
                str(version),
                tuple(str(a) for a in after),
                tuple((str(s), str(c), str(t)) for s, c, t in findings),
                bool(destroys),
                int(forced[0]) if forced else 0,
            )
            for node, source, role, kubelet, version, after, findings, destroys, *forced in raw
        ]
    except (ValueError, TypeError):
        return []


def dump_findings(findings: Sequence[tuple[str, str]]) -> str:
    return json.dumps([list(f) for f in findings])


def load_findings(batch: Request) -> list[tuple[str, str]]:
    try:
        return [(str(s), str(t)) for s, t in json.loads(batch.extra.get(FINDINGS) or "[]")]
    except (ValueError, TypeError):
        return []


def child_ids(batch: Request) -> list[str]:
    return [i for i in batch.extra.get(CHILDREN, "").split(",") if i]


def children(store: RequestStore, batch: Request) -> list[Request]:
    return [c for c in (store.get(i) for i in child_ids(batch)) if c is not None]


def not_moved(kids: Sequence[Request]) -> list[str]:
    return [c.node for c in kids if c.state is not State.SUCCEEDED]
