"""An Ignition request's message, from its `IgnitionView`."""

from __future__ import annotations

from slack_sdk.models.blocks import Block

from bot.render.blocks import closing, context, fields, header, section, sections
from bot.views.ignition import IgnitionView


def ignition_message(view: IgnitionView) -> list[Block]:
    blocks: list[Block] = [header(view.header), fields(view.fields)]
    blocks += sections(view.refusals)
    blocks += [section(line) for line in view.about]
    if view.note:
        blocks.append(context(view.note))
    return blocks + closing(view.closing)
