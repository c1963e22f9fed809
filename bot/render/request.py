"""A migration request's message, from its `RequestView`."""

from __future__ import annotations

from slack_sdk.models.blocks import Block, HeaderBlock

from bot.render.blocks import closing, context, fields, section, sections
from bot.views.request import RequestView


def request_message(view: RequestView) -> list[Block]:
    return [
        HeaderBlock(text=view.header),
        fields(view.fields),
        context(view.versions),
        *sections(view.findings),
        section(view.plan),
        *closing(view.closing),
    ]
