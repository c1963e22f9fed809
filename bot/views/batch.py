"""A batch's message (several nodes in one request): the stored batch and its children (or a
refused plan) → a `BatchView`, its table already worded cell by cell."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from bot.batch_record import CANCELLED_BY, STATUS_CELL, Row, load_findings, load_rows
from bot.texts import batch as batch_texts
from bot.texts import request as request_texts
from bot.views.closing import ClosingView, approve_confirm, cancel_confirm, decision_line
from bot.views.loan_field import loan_field
from joinops import parallelism
from joinops.requests.lifecycle import State
from joinops.requests.store import Request
from joinops.settings import MaxParallel

SEVERITY_RANK = {"REFUSAL": 0, "WARNING": 1, "NOTE": 2}


@dataclass(frozen=True)
class BatchView:
    """What one batch request message shows, worded."""

    fallback: str
    header: str
    fields: tuple[str, ...]
    refusals: tuple[str, ...]  # above the table
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    no_rows: str  # instead of the table when there is no row
    findings: tuple[str, ...]  # warnings and notes, under the table
    order: str  # how the nodes are run; "" for a refusal
    closing: ClosingView
    # When the whole message would not fit in Slack's limits, the root shows these instead,
    # and the thread gets the table and the findings in full (bot.render.batch):
    summary: str = ""  # the nodes counted by state; "" for a refusal
    watched: tuple[tuple[str, ...], ...] = ()  # the rows of the nodes running or failed
    watched_title: str = ""
    in_thread: str = ""  # says where the rest is
    more_lines: Callable[[int], str] = batch_texts.more_lines
    more_rows: Callable[[int], str] = batch_texts.more_rows
    page_title: Callable[[int, int], str] = batch_texts.table_page
    findings_title: str = batch_texts.findings_in_thread()


def cell_of(child: Request | None) -> str:
    """A node's STATUS cell."""
    if child is None:
        return batch_texts.child_status("pending")
    return batch_texts.child_status(
        str(child.state), child.extra.get(STATUS_CELL, ""), child.failed_step
    )


def stored_view(
    batch: Request,
    kids: Sequence[Request],
    max_parallel: MaxParallel,
    approvers: Sequence[str] = (),
) -> BatchView:
    """A stored batch; `approvers` are mentioned (so notified) while it waits for them. Its
    order says the number of nodes at once it was planned with (joinops/parallelism.py), the
    one its workers keep to; `max_parallel`, the setting, only for a batch stored without it."""
    rows = load_rows(batch)
    asked = approvers if batch.state is State.PENDING else ()
    planned = parallelism.stored(batch.extra)
    return view(
        requester=batch.requester,
        target=batch.target,
        rows=rows,
        findings=load_findings(batch),
        max_parallel=planned or (max_parallel if isinstance(max_parallel, int) else None),
        status=status_line(batch, kids, asked),
        batch=batch,
        kids={c.node: c for c in kids},
        approvers=asked,
    )


def view(
    *,
    requester: str,
    target: str,
    rows: Sequence[Row],
    findings: Sequence[tuple[str, str]],
    max_parallel: int | None,  # None: chosen when it starts (`auto`, a batch stored without it)
    status: str,
    batch: Request | None = None,
    kids: Mapping[str, Request] | None = None,
    force: bool = False,
    approvers: Sequence[str] = (),
) -> BatchView:
    """A stored batch (`batch`, with its children by node) or a refused plan (`batch` None)."""
    refused = batch is None
    ordered = _ordered_findings(rows, findings)
    refusals = [batch_texts.finding_line(s, node, t) for s, node, t in ordered if s == "REFUSAL"]
    others = [batch_texts.finding_line(s, node, t) for s, node, t in ordered if s != "REFUSAL"]
    if not ordered and rows:
        others = [request_texts.no_findings()]
    sources = sorted({r.source for r in rows})
    destroys = sorted({r.source for r in rows if r.destroys})
    forced = force or bool(batch and batch.force)
    count = len(rows)
    table = tuple(_row(r, (kids or {}).get(r.node), with_status=not refused) for r in rows)
    watched = tuple(
        row for r, row in zip(rows, table, strict=True) if _watched((kids or {}).get(r.node))
    )
    return BatchView(
        fallback=(
            batch_texts.refused_fallback(requester, count, target)
            if refused
            else batch_texts.fallback(requester, count, sources, target, approvers)
        ),
        header=(batch_texts.refused_header if refused else batch_texts.header)(count, target),
        fields=tuple(
            batch_texts.fields(requester, count, sources, target, batch.id if batch else "", forced)
        )
        + _loan_field(batch),
        refusals=tuple(refusals),
        columns=batch_texts.BATCH_COLUMNS[:-1] if refused else batch_texts.BATCH_COLUMNS,
        rows=table,
        no_rows=batch_texts.no_nodes(),
        findings=tuple(others),
        order="" if refused else batch_texts.order(max_parallel, target),
        closing=ClosingView(
            request_id=batch.id if batch else "",
            status=status,
            buttons=batch is not None and batch.state is State.PENDING,
            decision=decision_line(batch) if batch else "",
            confirm=approve_confirm(
                batch_texts.confirm_destroy_many(destroys) if destroys else "",
                sum(r.forced for r in rows),
            ),
            cancel=(
                cancel_confirm(
                    batch_texts.confirm_cancel_title(count),
                    batch_texts.confirm_cancel(),
                    batch_texts.confirm_cancel_yes(),
                )
                if batch is not None and cancellable(batch, (kids or {}).values())
                else None
            ),
        ),
        summary="" if refused else batch_texts.state_counts(_counts(rows, kids or {})),
        watched=watched,
        watched_title=batch_texts.watched_title(len(watched)),
        in_thread=batch_texts.table_in_thread(count),
    )


def cancellable(batch: Request, kids: Iterable[Request]) -> bool:
    """Would `/join cancel` of the batch stop anything (bot/batch.py `Batches.cancel`)? Before
    and right after approval, yes; once it runs, while a node has not started its node agent
    and nobody has cancelled it yet."""
    if batch.state in (State.PENDING, State.APPROVED):
        return True
    if batch.state is not State.RUNNING or batch.extra.get(CANCELLED_BY):
        return False
    return any(k.state.is_active and not k.agent_started for k in kids)


def _watched(child: Request | None) -> bool:
    return child is not None and child.state in (State.RUNNING, State.FAILED)


def _counts(rows: Sequence[Row], kids: Mapping[str, Request]) -> dict[str, int]:
    """How many of the batch's nodes are in each state (`waiting`: not started yet)."""
    counts: dict[str, int] = {}
    for r in rows:
        child = kids.get(r.node)
        state = str(child.state) if child is not None else "pending"
        key = "waiting" if state in ("pending", "approved") else state
        counts[key] = counts.get(key, 0) + 1
    return counts


def _loan_field(batch: Request | None) -> tuple[str, ...]:
    """A batch asked `for DURATION`: each node is lent, and moved back, on its own."""
    shown = loan_field(batch.extra, batch_texts.EACH_SOURCE) if batch is not None else ""
    return (shown,) if shown else ()


def _row(r: Row, child: Request | None, with_status: bool = False) -> tuple[str, ...]:
    cells = (
        r.node,
        r.source,
        batch_texts.versions(r.kubelet, r.target_version),
        r.role,
        batch_texts.waits_for(r.after, r.source),
        batch_texts.findings_cell([(s, c) for s, c, _ in r.findings]),
    )
    return (*cells, cell_of(child)) if with_status else cells


def _ordered_findings(
    rows: Sequence[Row], findings: Sequence[tuple[str, str]]
) -> list[tuple[str, str, str]]:
    """(severity, node or "", text), refusals first; in each rank the batch's own first."""
    about_nodes = [(s, r.node, t) for r in rows for s, _, t in r.findings]
    ordered = [(s, "", t) for s, t in findings] + about_nodes
    ordered.sort(key=lambda f: SEVERITY_RANK.get(f[0], 3))  # stable
    return ordered


def status_line(batch: Request, kids: Sequence[Request], approvers: Sequence[str] = ()) -> str:
    state = batch.state
    if state is State.PENDING:
        return request_texts.waiting_status(batch.expires_at, retry=False, approvers=approvers)
    if state is State.APPROVED:
        return request_texts.queued_status()
    if state is State.RUNNING:
        if batch.extra.get(CANCELLED_BY):
            return batch_texts.cancelling_status()
        count = {s: sum(c.state is s for c in kids) for s in State}
        return batch_texts.running_status(
            count[State.SUCCEEDED],
            count[State.RUNNING],
            count[State.FAILED] + count[State.RETURNED],
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
