"""The answer to a question (`status`, `list`, `clusters`), from its `ReportView`."""

from __future__ import annotations

from slack_sdk.models.blocks import Block

from bot.render.blocks import context, section, sections
from bot.views.report import ReportView


def report(view: ReportView) -> list[Block]:
    blocks: list[Block] = [section(view.title)]
    if view.facts:
        blocks.append(context(view.facts))
    if view.outcome:
        blocks.append(section(view.outcome))
    return blocks + sections(view.lines)
