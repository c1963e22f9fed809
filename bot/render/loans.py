"""A loan's message in its thread → Block Kit: its text, then Extend and Return now."""

from __future__ import annotations

from slack_sdk.models.blocks import ActionsBlock, Block, ButtonElement

from bot.render.blocks import section
from bot.views.loans import LoanMessageView

EXTEND_ACTION = "loan_extend"
RETURN_ACTION = "loan_return"
LOAN_ACTIONS_BLOCK = "loan"


def loan_message(view: LoanMessageView) -> list[Block]:
    blocks: list[Block] = [section(view.text)]
    buttons = []
    if view.extend:
        buttons.append(ButtonElement(text=view.extend, action_id=EXTEND_ACTION, value=view.value))
    if view.return_now:
        buttons.append(
            ButtonElement(
                text=view.return_now, action_id=RETURN_ACTION, value=view.value, style="primary"
            )
        )
    if buttons:
        blocks.append(ActionsBlock(block_id=LOAN_ACTIONS_BLOCK, elements=buttons))
    return blocks
