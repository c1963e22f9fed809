"""An arrival's announcement as Block Kit blocks, from its view (no words of its own)."""

from __future__ import annotations

from slack_sdk.models.blocks import ActionsBlock, Block, ButtonElement, DividerBlock

from bot.render.blocks import context, fields, section
from bot.views.arrival import AnnouncementView

MOVE_ACTION = "arrival_move"
DISMISS_ACTION = "arrival_dismiss"
BUTTONS_BLOCK = "arrival_buttons"


def announcement(view: AnnouncementView) -> list[Block]:
    blocks: list[Block] = [section(view.title)]
    if view.fields:
        blocks.append(fields(view.fields))
    blocks.append(section(view.proposal))
    buttons = []
    if view.move:
        buttons.append(
            ButtonElement(
                text=view.move, action_id=MOVE_ACTION, value=view.cluster, style="primary"
            )
        )
    if view.dismiss:
        buttons.append(
            ButtonElement(text=view.dismiss, action_id=DISMISS_ACTION, value=view.cluster)
        )
    blocks.append(DividerBlock())
    if buttons:
        blocks.append(ActionsBlock(block_id=BUTTONS_BLOCK, elements=buttons))
    blocks.append(context(view.status))
    return blocks
