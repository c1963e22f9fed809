"""The answers to questions: `/join status`, `/join list`, `/join clusters` → a `ReportView`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from bot.texts import batch as batch_texts
from bot.texts import status as status_texts
from bot.views.batch import cell_of
from joinops.clusters.survey import ClusterRow
from joinops.requests.plan import STEP_IDS
from joinops.requests.steprecords import StepRecord
from joinops.requests.store import Request


@dataclass(frozen=True)
class ReportView:
    """A title, then optionally a line of facts and an outcome, then lines."""

    title: str
    lines: tuple[str, ...] = ()
    facts: str = ""
    outcome: str = ""
    fallback: str = ""  # the notification text, when it is not the title
    more: Callable[[int], str] = status_texts.more_lines  # lines left out (Slack's limits)

    @property
    def text(self) -> str:
        return self.fallback or self.title


def status_view(request: Request, records: Mapping[str, StepRecord]) -> ReportView:
    """`/join status` of a migration or an Ignition request: its steps as recorded."""
    role, decided_by = str(request.role), request.decided_by
    if request.kind == "ignition":
        facts = status_texts.ignition_facts(request.target, role, request.requester, decided_by)
    else:
        facts = status_texts.facts(
            request.node, request.source, request.target, role, request.requester, decided_by
        )
    ordered = [s for s in STEP_IDS if s in records] + sorted(set(records) - set(STEP_IDS))
    lines = [
        status_texts.step_line(s, str(records[s].outcome), records[s].attempts, records[s].message)
        for s in ordered
    ]
    if request.kind == "ignition" and not records:
        lines = []  # one job, no step records: the outcome says it all
    elif not lines:
        lines = [status_texts.no_steps()]
    return ReportView(
        title=status_texts.title(request.id, str(request.state)),
        facts=facts,
        outcome=_outcome(request),
        lines=tuple(lines),
    )


def batch_status_view(batch: Request, kids: Sequence[Request]) -> ReportView:
    """`/join status` of a batch: the batch, its outcome, one line per node."""
    lines = [status_texts.batch_line(c.id, c.node, c.source, cell_of(c)) for c in kids]
    return ReportView(
        title=status_texts.title(batch.id, str(batch.state)),
        facts=status_texts.batch_facts(
            len(lines), batch.source, batch.target, batch.requester, batch.decided_by
        ),
        outcome=_outcome(batch),
        lines=tuple(lines or [batch_texts.no_nodes()]),
    )


def _step_line(step: str, record: StepRecord) -> str:
    return status_texts.step_line(step, str(record.outcome), record.attempts, record.message)


def _outcome(request: Request) -> str:
    return status_texts.outcome_line(request.outcome) if request.outcome else ""


def active_view(requests: Sequence[Request]) -> ReportView:
    """The active requests: a batch's nodes are counted in its line."""
    shown = [r for r in requests if not r.parent]
    title = status_texts.list_title(len(shown))
    if not shown:
        return ReportView(title=status_texts.list_empty(), fallback=title)
    return ReportView(title=title, lines=tuple(_list_line(r) for r in shown))


def _list_line(r: Request) -> str:
    state = str(r.state)
    if r.kind == "batch":
        count = len([c for c in r.extra.get("children", "").split(",") if c])
        return status_texts.list_line_batch(r.id, count, r.target, state, r.requester)
    if r.kind == "ignition":
        return status_texts.list_line_ignition(r.id, r.target, str(r.role), state, r.requester)
    return status_texts.list_line(r.id, r.node, r.source, r.target, state, r.requester)


def clusters_view(rows: Iterable[ClusterRow]) -> ReportView:
    lines = [
        status_texts.cluster_line(
            r.name, r.reachable, r.version, r.nodes, r.control_planes, r.endpoint, r.problem
        )
        for r in rows
    ]
    return ReportView(title=status_texts.clusters_title(), lines=tuple(lines))
