"""Every message the bot shows, built with slack_sdk's Block Kit models.

Pure functions: data in, a list of blocks out. The texts come from `bot.texts`; what a request
message shows is decided in `bot.message` and handed over as a `RequestView`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

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

from bot import texts
from joinops.cli.clusters_cmd import ClusterRow
from joinops.plan import STEP_IDS
from joinops.steprecords import StepRecord
from joinops.store import Request

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


def request_message(view: RequestView) -> list[Block]:
    header = texts.refused_header if view.refused else texts.request_header
    blocks: list[Block] = [
        HeaderBlock(text=header(view.node, view.source, view.target)),
        SectionBlock(
            fields=[
                MarkdownTextObject(text=f)
                for f in texts.fact_fields(
                    view.requester, view.node, view.source, view.target, view.role, view.request_id
                )
            ]
        ),
        _context(view.versions or texts.versions_unknown()),
    ]
    lines = [texts.finding_line(sev, text) for sev, text in view.findings] or [texts.no_findings()]
    blocks += _sections(lines)
    blocks.append(_section(texts.plan_lines(view.plan)))
    blocks.append(DividerBlock())
    if view.buttons:
        blocks.append(_decision_buttons(view))
    elif view.decision:
        blocks.append(_section(view.decision, block_id=DECISION_BLOCK))
    blocks.append(_context(view.status, block_id=STATUS_BLOCK))
    return blocks


def _decision_buttons(view: RequestView) -> ActionsBlock:
    confirm = None
    if view.destroys_source:
        confirm = ConfirmObject(
            title=texts.confirm_destroy_title(),
            text=texts.confirm_destroy(view.source),
            confirm=texts.confirm_destroy_yes(),
            deny=texts.confirm_no(),
            style="danger",
        )
    return ActionsBlock(
        block_id=DECISION_BLOCK,
        elements=[
            ButtonElement(
                text=texts.APPROVE,
                action_id=APPROVE_ACTION,
                value=view.request_id,
                style="primary",
                confirm=confirm,
            ),
            ButtonElement(
                text=texts.REJECT, action_id=REJECT_ACTION, value=view.request_id, style="danger"
            ),
        ],
    )


def reply(text: str) -> list[Block]:
    """A thread reply or an ephemeral answer: one section of mrkdwn."""
    return _sections(text.splitlines() or [text])


def status_report(request: Request, records: Mapping[str, StepRecord]) -> list[Block]:
    blocks: list[Block] = [
        _section(texts.status_title(request.id, str(request.state))),
        _context(
            texts.status_facts(
                request.node,
                request.source,
                request.target,
                str(request.role),
                request.requester,
                request.decided_by,
            )
        ),
    ]
    if request.outcome:
        blocks.append(_section(texts.status_outcome(request.outcome)))
    ordered = [s for s in STEP_IDS if s in records] + sorted(set(records) - set(STEP_IDS))
    lines = [
        texts.status_step(s, str(records[s].outcome), records[s].attempts, records[s].message)
        for s in ordered
    ]
    blocks += _sections(lines or [texts.status_no_steps()])
    return blocks


def active_list(requests: Sequence[Request]) -> list[Block]:
    if not requests:
        return [_section(texts.list_empty())]
    lines = [
        texts.list_line(r.id, r.node, r.source, r.target, str(r.state), r.requester)
        for r in requests
    ]
    return [_section(texts.list_title(len(requests))), *_sections(lines)]


def clusters_table(rows: Iterable[ClusterRow]) -> list[Block]:
    lines = [
        texts.cluster_line(
            r.name, r.reachable, r.version, r.nodes, r.control_planes, r.endpoint, r.problem
        )
        for r in rows
    ]
    return [_section(texts.clusters_title()), *_sections(lines)]


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
