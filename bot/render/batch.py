"""A batch's message, from its `BatchView`: refusals, the table, the other findings, the order."""

from __future__ import annotations

from slack_sdk.models.blocks import Block, HeaderBlock

from bot.render.blocks import closing, context, fields, section, sections, table
from bot.views.batch import BatchView


def batch_message(view: BatchView) -> list[Block]:
    blocks: list[Block] = [HeaderBlock(text=view.header), fields(view.fields)]
    blocks += sections(view.refusals)
    blocks += table(view.columns, view.rows) if view.rows else [section(view.no_rows)]
    blocks += sections(view.findings)
    if view.order:
        blocks.append(context(view.order))
    return blocks + closing(view.closing)
