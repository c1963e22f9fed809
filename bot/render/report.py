"""The answer to a question (`status`, `list`, `clusters`), from its `ReportView`."""

from __future__ import annotations

from slack_sdk.models.blocks import Block

from bot import slack_limits
from bot.render.blocks import context, section
from bot.render.pages import capped
from bot.views.report import ReportView


def report(view: ReportView) -> list[Block]:
    blocks: list[Block] = [section(view.title)]
    if view.facts:
        blocks.append(context(view.facts))
    if view.outcome:
        blocks.append(section(view.outcome))
    room = slack_limits.TEXT_BUDGET - slack_limits.text_length(blocks)
    return blocks + capped(view.lines, room, view.more, slack_limits.BLOCKS - len(blocks))
