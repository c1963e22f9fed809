"""The pieces every message is made of: sections packed to Slack's limits, a monospace table,
and the bottom of a request message (buttons or decision, Cancel while it applies, then the
status line)."""

from __future__ import annotations

from collections.abc import Sequence

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

from bot import slack_limits
from bot.views.closing import ClosingView, ConfirmView

APPROVE_ACTION = "join_approve"
REJECT_ACTION = "join_reject"
CANCEL_ACTION = "join_cancel"
SECTION_LIMIT = slack_limits.SECTION_TEXT  # characters of mrkdwn in one section
STATUS_BLOCK = "status"
DECISION_BLOCK = "decision"
CANCEL_BLOCK = "cancel"


def section(text: str, block_id: str | None = None) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=text[:SECTION_LIMIT]), block_id=block_id)


def context(text: str, block_id: str | None = None) -> ContextBlock:
    return ContextBlock(elements=[MarkdownTextObject(text=text[:SECTION_LIMIT])], block_id=block_id)


def fields(texts: Sequence[str]) -> SectionBlock:
    shown = texts[: slack_limits.FIELDS]
    return SectionBlock(
        fields=[MarkdownTextObject(text=t[: slack_limits.FIELD_TEXT]) for t in shown]
    )


def header(text: str) -> HeaderBlock:
    return HeaderBlock(text=text[: slack_limits.HEADER_TEXT])


def sections(lines: Sequence[str]) -> list[Block]:
    """Lines packed into as few sections as their length allows."""
    blocks: list[Block] = []
    chunk = ""
    for line in lines:
        line = line[:SECTION_LIMIT]
        if chunk and len(chunk) + 1 + len(line) > SECTION_LIMIT:
            blocks.append(section(chunk))
            chunk = ""
        chunk = f"{chunk}\n{line}" if chunk else line
    if chunk:
        blocks.append(section(chunk))
    return blocks


def reply(text: str) -> list[Block]:
    """A thread reply or an ephemeral answer: one section of mrkdwn."""
    return sections(text.splitlines() or [text])


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
            blocks.append(section("```" + "\n".join([head, *chunk]) + "```"))
            chunk = []
        chunk.append(text)
    blocks.append(section("```" + "\n".join([head, *chunk]) + "```"))
    return blocks


def closing(view: ClosingView) -> list[Block]:
    """The bottom of a request message: the buttons (Cancel among them while it applies) or the
    decision (then Cancel under it while it applies), then the status line."""
    blocks: list[Block] = [DividerBlock()]
    if view.buttons:
        blocks.append(_buttons(view))
    else:
        if view.decision:
            blocks.append(section(view.decision, block_id=DECISION_BLOCK))
        if view.cancel:
            blocks.append(ActionsBlock(block_id=CANCEL_BLOCK, elements=[_cancel(view)]))
    blocks.append(context(view.status, block_id=STATUS_BLOCK))
    return blocks


def _buttons(view: ClosingView) -> ActionsBlock:
    approve = ButtonElement(
        text=view.approve,
        action_id=APPROVE_ACTION,
        value=view.request_id,
        style="primary",
        confirm=_confirm(view.confirm) if view.confirm else None,
    )
    reject = ButtonElement(
        text=view.reject, action_id=REJECT_ACTION, value=view.request_id, style="danger"
    )
    cancel = [_cancel(view)] if view.cancel else []
    return ActionsBlock(block_id=DECISION_BLOCK, elements=[approve, reject, *cancel])


def _cancel(view: ClosingView) -> ButtonElement:
    """Cancel: the same as `/join cancel ID`, after a dialog. Not red itself, so that it does
    not pass for Reject; its dialog's button is."""
    return ButtonElement(
        text=view.cancel_label,
        action_id=CANCEL_ACTION,
        value=view.request_id,
        confirm=_confirm(view.cancel) if view.cancel else None,
    )


def _confirm(view: ConfirmView) -> ConfirmObject:
    return ConfirmObject(
        title=view.title, text=view.text, confirm=view.yes, deny=view.no, style="danger"
    )
