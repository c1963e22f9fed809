"""What a batch request message shows: its plan as stored, and each node's state now.

A batch (kind `batch`, see `joinops.rules.batch`) keeps in `extra`, besides `children`:

- `rows`: the plan's table, JSON: per node its source, role, kubelet and target versions, the
  nodes it waits for, its findings and whether moving it empties its source;
- `batch_findings`: findings about the batch as a whole, JSON (refusals first).

Each child (an ordinary migration with `parent` = the batch) keeps `status_cell`, the STATUS
cell the relay writes while it runs. Everything here is pure: records in, a view out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot import blocks
from bot.texts import batch as batch_texts
from bot.texts import request as request_texts
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


# ---- the view ----------------------------------------------------------------------------------


def cell_of(child: Request | None) -> str:
    if child is None:
        return batch_texts.child_status("pending")
    return batch_texts.child_status(
        str(child.state), child.extra.get(STATUS_CELL, ""), child.failed_step
    )


def view(
    *,
    requester: str,
    target: str,
    rows: Sequence[Row],
    findings: Sequence[tuple[str, str]],
    max_parallel: int,
    status: str,
    batch: Request | None = None,
    kids: Mapping[str, Request] | None = None,
    decision: str = "",
    force: bool = False,
) -> blocks.BatchView:
    """A stored batch (`batch`, with its children by node) or a refused plan (`batch` None)."""
    refused = batch is None
    kids = kids or {}
    table = tuple(
        blocks.BatchRowView(
            node=r.node,
            source=r.source,
            versions=batch_texts.versions(r.kubelet, r.target_version),
            role=r.role,
            waits_for=batch_texts.waits_for(r.after, r.source),
            findings=batch_texts.findings_cell([(s, c) for s, c, _ in r.findings]),
            status="" if refused else cell_of(kids.get(r.node)),
        )
        for r in rows
    )
    about_nodes = [(s, r.node, t) for r in rows for s, _, t in r.findings]
    ordered = [(s, "", t) for s, t in findings] + about_nodes
    rank = {"REFUSAL": 0, "WARNING": 1, "NOTE": 2}
    ordered.sort(key=lambda f: rank.get(f[0], 3))  # stable: the batch's own first in each rank
    return blocks.BatchView(
        requester=requester,
        target=target,
        sources=tuple(sorted({r.source for r in rows})),
        request_id=batch.id if batch else "",
        rows=table,
        findings=tuple(ordered),
        order=batch_texts.order(max_parallel, target),
        status=status,
        destroys=tuple(sorted({r.source for r in rows if r.destroys})),
        forced_deletions=sum(r.forced for r in rows),
        force=force or bool(batch and batch.force),
        buttons=batch is not None and batch.state is State.PENDING,
        decision=decision,
        refused=refused,
    )


def status_line(batch: Request, kids: Sequence[Request]) -> str:
    state = batch.state
    if state is State.PENDING:
        return request_texts.waiting_status(batch.expires_at, retry=False)
    if state is State.APPROVED:
        return request_texts.queued_status()
    if state is State.RUNNING:
        if batch.extra.get(CANCELLED_BY):
            return batch_texts.cancelling_status()
        count = {s: sum(c.state is s for c in kids) for s in State}
        return batch_texts.running_status(
            count[State.SUCCEEDED],
            count[State.RUNNING],
            count[State.FAILED],
            count[State.APPROVED] + count[State.PENDING],
            len(kids),
        )
    if state is State.SUCCEEDED:
        return batch_texts.succeeded_status(batch.outcome)
    if state is State.FAILED:
        by = batch.extra.get(CANCELLED_BY)
        if by:
            return batch_texts.cancelled_late_status(by, batch.outcome)
        return batch_texts.failed_status(batch.outcome)
    if state is State.CANCELLED:
        return batch_texts.cancelled_status()
    if state is State.REJECTED:
        return request_texts.rejected_status()
    return request_texts.expired_status()
