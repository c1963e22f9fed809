"""Every message the bot shows, built with slack_sdk's Block Kit models.

Pure functions: data in, a list of blocks out. The texts come from `bot.texts`; what a request
message shows is decided in `bot.message` and handed over as a `RequestView`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ConfirmObject,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    SectionBlock,
)

from bot.texts import batch as batch_texts
from bot.texts import ignition as ignition_texts
from bot.texts import request as request_texts
from bot.texts import status as status_texts
from joinops.clusters.survey import ClusterRow
from joinops.requests.plan import STEP_IDS
from joinops.requests.steprecords import StepRecord
from joinops.requests.store import Request

APPROVE_ACTION = "join_approve"
REJECT_ACTION = "join_reject"
SECTION_LIMIT = 3000  # characters of mrkdwn in one section
STATUS_BLOCK = "status"
DECISION_BLOCK = "decision"


@dataclass(frozen=True)
class RequestView:
    """What one request message shows."""

    requester: str
    node: str
    source: str
    target: str
    role: str
    request_id: str  # "" for a refusal: nothing was stored
    findings: tuple[tuple[str, str], ...]  # (severity name, text), refusals first
    versions: str | None
    plan: tuple[str, ...]
    status: str
    buttons: bool = False
    decision: str = ""  # the line that replaces the buttons once decided
    destroys_source: bool = False
    refused: bool = False
    force: bool = False  # the drain deletes pods no controller recreates
    forced_deletions: int = 0


def request_message(view: RequestView) -> list[Block]:
    header = request_texts.refused_header if view.refused else request_texts.request_header
    blocks: list[Block] = [
        HeaderBlock(text=header(view.node, view.source, view.target)),
        SectionBlock(
            fields=[
                MarkdownTextObject(text=f)
                for f in request_texts.fact_fields(
                    view.requester,
                    view.node,
                    view.source,
                    view.target,
                    view.role,
                    view.request_id,
                    view.force,
                )
            ]
        ),
        _context(view.versions or request_texts.versions_unknown()),
    ]
    lines = [request_texts.finding_line(sev, text) for sev, text in view.findings] or [
        request_texts.no_findings()
    ]
    blocks += _sections(lines)
    blocks.append(_section(request_texts.plan_lines(view.plan)))
    destroys = request_texts.confirm_destroy(view.source) if view.destroys_source else ""
    confirm = _approve_confirm(destroys, view.forced_deletions)
    blocks += _closing(view.request_id, view.buttons, view.decision, view.status, confirm)
    return blocks


def _approve_confirm(destroys: str, forced_deletions: int) -> ConfirmObject | None:
    """The dialog the Approve button opens, when approving destroys a cluster or deletes pods
    for good; None when it does neither."""
    if forced_deletions:
        return ConfirmObject(
            title=request_texts.confirm_force_title(forced_deletions),
            text=request_texts.confirm_force(forced_deletions, destroys),
            confirm=request_texts.confirm_force_yes(),
            deny=request_texts.confirm_no(),
            style="danger",
        )
    return _destroy_confirm(destroys) if destroys else None


def _destroy_confirm(text: str) -> ConfirmObject:
    return ConfirmObject(
        title=request_texts.confirm_destroy_title(),
        text=text,
        confirm=request_texts.confirm_destroy_yes(),
        deny=request_texts.confirm_no(),
        style="danger",
    )


def _buttons(request_id: str, confirm: ConfirmObject | None = None) -> ActionsBlock:
    return ActionsBlock(
        block_id=DECISION_BLOCK,
        elements=[
            ButtonElement(
                text=request_texts.APPROVE,
                action_id=APPROVE_ACTION,
                value=request_id,
                style="primary",
                confirm=confirm,
            ),
            ButtonElement(
                text=request_texts.REJECT, action_id=REJECT_ACTION, value=request_id, style="danger"
            ),
        ],
    )


def _closing(
    request_id: str, buttons: bool, decision: str, status: str, confirm: ConfirmObject | None
) -> list[Block]:
    """The bottom of a request message: the buttons or the decision, then the status line."""
    blocks: list[Block] = [DividerBlock()]
    if buttons:
        blocks.append(_buttons(request_id, confirm))
    elif decision:
        blocks.append(_section(decision, block_id=DECISION_BLOCK))
    blocks.append(_context(status, block_id=STATUS_BLOCK))
    return blocks


# ---- Ignition requests -------------------------------------------------------------------------


@dataclass(frozen=True)
class IgnitionView:
    """What one Ignition request message shows."""

    requester: str
    cluster: str
    role: str
    request_id: str  # "" for a refusal
    ttl: timedelta
    status: str
    reasons: tuple[str, ...] = ()  # why it is refused
    buttons: bool = False
    decision: str = ""
    refused: bool = False


def ignition_message(view: IgnitionView) -> list[Block]:
    header = ignition_texts.refused_header if view.refused else ignition_texts.header
    control_plane = view.role == "control-plane"
    blocks: list[Block] = [
        HeaderBlock(text=header(view.cluster, view.role)),
        SectionBlock(
            fields=[
                MarkdownTextObject(text=f)
                for f in ignition_texts.fields(
                    view.requester, view.cluster, view.role, view.request_id
                )
            ]
        ),
    ]
    if view.refused:
        blocks += _sections([request_texts.finding_line("REFUSAL", r) for r in view.reasons])
    else:
        blocks.append(_section(ignition_texts.validity(view.ttl, control_plane)))
        blocks.append(_section(ignition_texts.delivery(view.requester, view.cluster)))
        blocks.append(_section(ignition_texts.plan(view.cluster, control_plane)))
        blocks.append(_context(ignition_texts.without_byo()))
    blocks += _closing(view.request_id, view.buttons, view.decision, view.status, None)
    return blocks


# ---- batches: several nodes in one request -----------------------------------------------------


@dataclass(frozen=True)
class BatchRowView:
    """One node's row of a batch table; every cell already worded."""

    node: str
    source: str
    versions: str
    role: str
    waits_for: str
    findings: str
    status: str = ""


@dataclass(frozen=True)
class BatchView:
    """What one batch request message shows."""

    requester: str
    target: str
    sources: tuple[str, ...]
    request_id: str  # "" for a refusal
    rows: tuple[BatchRowView, ...]
    findings: tuple[tuple[str, str, str], ...]  # (severity, node or "", text), refusals first
    order: str
    status: str
    destroys: tuple[str, ...] = ()  # sources the batch empties
    forced_deletions: int = 0  # pods its forced drains delete for good
    force: bool = False
    buttons: bool = False
    decision: str = ""
    refused: bool = False


def batch_message(view: BatchView) -> list[Block]:
    header = batch_texts.refused_header if view.refused else batch_texts.header
    blocks: list[Block] = [
        HeaderBlock(text=header(len(view.rows), view.target)),
        SectionBlock(
            fields=[
                MarkdownTextObject(text=f)
                for f in batch_texts.fields(
                    view.requester,
                    len(view.rows),
                    view.sources,
                    view.target,
                    view.request_id,
                    view.force,
                )
            ]
        ),
    ]
    refusals = [f for f in view.findings if f[0] == "REFUSAL"]
    others = [f for f in view.findings if f[0] != "REFUSAL"]
    lines = [batch_texts.finding_line(sev, node, text) for sev, node, text in refusals]
    blocks += _sections(lines)
    with_status = not view.refused
    header_row = batch_texts.BATCH_COLUMNS if with_status else batch_texts.BATCH_COLUMNS[:-1]
    rows = [
        (r.node, r.source, r.versions, r.role, r.waits_for, r.findings)
        + ((r.status,) if with_status else ())
        for r in view.rows
    ]
    blocks += table(header_row, rows) if rows else [_section(batch_texts.no_nodes())]
    lines = [batch_texts.finding_line(sev, node, text) for sev, node, text in others]
    if not view.findings and rows:
        lines = [request_texts.no_findings()]
    blocks += _sections(lines)
    if not view.refused:
        blocks.append(_context(view.order))
    destroys = batch_texts.confirm_destroy_many(view.destroys) if view.destroys else ""
    confirm = _approve_confirm(destroys, view.forced_deletions)
    blocks += _closing(view.request_id, view.buttons, view.decision, view.status, confirm)
    return blocks


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[Block]:
    """A monospace table (a code block), split over sections when long: every Slack client
    shows it aligned, and it can sit anywhere in a message (a `table` block may not)."""
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    head = line(header)
    blocks: list[Block] = []
    chunk: list[str] = []
    for row in rows:
        text = line(row)[: SECTION_LIMIT - len(head) - 10]
        if chunk and sum(len(c) + 1 for c in chunk) + len(head) + len(text) + 10 > SECTION_LIMIT:
            blocks.append(_section("```" + "\n".join([head, *chunk]) + "```"))
            chunk = []
        chunk.append(text)
    blocks.append(_section("```" + "\n".join([head, *chunk]) + "```"))
    return blocks


def reply(text: str) -> list[Block]:
    """A thread reply or an ephemeral answer: one section of mrkdwn."""
    return _sections(text.splitlines() or [text])


def status_report(request: Request, records: Mapping[str, StepRecord]) -> list[Block]:
    if request.kind == "ignition":
        facts = status_texts.status_ignition_facts(
            request.target, str(request.role), request.requester, request.decided_by
        )
    else:
        facts = status_texts.status_facts(
            request.node,
            request.source,
            request.target,
            str(request.role),
            request.requester,
            request.decided_by,
        )
    blocks: list[Block] = [
        _section(status_texts.status_title(request.id, str(request.state))),
        _context(facts),
    ]
    if request.outcome:
        blocks.append(_section(status_texts.status_outcome(request.outcome)))
    if request.kind == "ignition" and not records:
        return blocks  # one job, no step records: the outcome says it all
    ordered = [s for s in STEP_IDS if s in records] + sorted(set(records) - set(STEP_IDS))
    lines = [
        status_texts.status_step(
            s, str(records[s].outcome), records[s].attempts, records[s].message
        )
        for s in ordered
    ]
    blocks += _sections(lines or [status_texts.status_no_steps()])
    return blocks


def batch_status_report(batch: Request, lines: Sequence[str]) -> list[Block]:
    """`/join status` of a batch: the batch, its outcome, one line per node."""
    count = len(lines)
    blocks: list[Block] = [
        _section(status_texts.status_title(batch.id, str(batch.state))),
        _context(
            status_texts.status_batch_facts(
                count, batch.source, batch.target, batch.requester, batch.decided_by
            )
        ),
    ]
    if batch.outcome:
        blocks.append(_section(status_texts.status_outcome(batch.outcome)))
    return blocks + _sections(list(lines) or [batch_texts.no_nodes()])


def active_list(requests: Sequence[Request]) -> list[Block]:
    """The active requests a person asked for: a batch's nodes are counted in its line."""
    shown = [r for r in requests if not r.parent]
    if not shown:
        return [_section(status_texts.list_empty())]
    return [
        _section(status_texts.list_title(len(shown))),
        *_sections([_list_line(r) for r in shown]),
    ]


def _list_line(r: Request) -> str:
    state = str(r.state)
    if r.kind == "batch":
        count = len([c for c in r.extra.get("children", "").split(",") if c])
        return status_texts.list_line_batch(r.id, count, r.target, state, r.requester)
    if r.kind == "ignition":
        return status_texts.list_line_ignition(r.id, r.target, str(r.role), state, r.requester)
    return status_texts.list_line(r.id, r.node, r.source, r.target, state, r.requester)


def clusters_table(rows: Iterable[ClusterRow]) -> list[Block]:
    lines = [
        status_texts.cluster_line(
            r.name, r.reachable, r.version, r.nodes, r.control_planes, r.endpoint, r.problem
        )
        for r in rows
    ]
    return [_section(status_texts.clusters_title()), *_sections(lines)]


def _section(text: str, block_id: str | None = None) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=text[:SECTION_LIMIT]), block_id=block_id)


def _context(text: str, block_id: str | None = None) -> ContextBlock:
    return ContextBlock(elements=[MarkdownTextObject(text=text[:SECTION_LIMIT])], block_id=block_id)


def _sections(lines: Sequence[str]) -> list[Block]:
    """Lines packed into as few sections as their length allows."""
    blocks: list[Block] = []
    chunk = ""
    for line in lines:
        line = line[:SECTION_LIMIT]
        if chunk and len(chunk) + 1 + len(line) > SECTION_LIMIT:
            blocks.append(_section(chunk))
            chunk = ""
        chunk = f"{chunk}\n{line}" if chunk else line
    if chunk:
        blocks.append(_section(chunk))
    return blocks
