"""Slack's limits on one message, and a checker: the one place the bot knows them.

Slack refuses a message over them (chat.postMessage, chat.update, chat.postEphemeral and a
response_url alike): `invalid_blocks` for one block over its limit or more than 50 blocks,
`msg_blocks_too_long` for more than about 12,000 characters of text across all the blocks
(bolt-js #2509: Slack counts some of the blocks' structure too, so the bot fills at most
`TEXT_BUDGET`), `msg_too_long` for a `text` fallback over 40,000. Every message the bot builds
is built within them (`bot.render.blocks`, `bot.render.pages`); `problems()` says what a
message breaks, for tests. `outgoing()` is the last check, on every message as it leaves
(`bot.pacing.PacedWebClient` for chat.postMessage, chat.update and chat.postEphemeral;
`bot.middleware.keep_to_limits` for a click's or a command's `respond`): a `text` over 40,000
characters is cut, ending "…" (it is the notification; the blocks say the rest); blocks Slack
would refuse are refused, never sent, with the error Slack would have answered.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from slack_sdk.models.blocks import Block

BLOCKS = 50  # blocks in one message
BLOCKS_TEXT = 12_000  # characters of text across the blocks of one message, as Slack counts
TEXT_BUDGET = 10_000  # what the bot fills of it: the rest is Slack's count of the structure
SECTION_TEXT = 3_000  # a section's text (and a context element's)
FIELDS = 10  # fields of one section
FIELD_TEXT = 2_000
HEADER_TEXT = 150
CONTEXT_ELEMENTS = 10
ACTIONS_ELEMENTS = 25
BUTTON_TEXT = 75
BUTTON_VALUE = 2_000
BLOCK_ID = 255
CONFIRM_TITLE = 100
CONFIRM_TEXT = 300
CONFIRM_BUTTON = 30
FALLBACK_TEXT = 40_000  # the `text` argument (notifications, and clients without blocks)
MESSAGE_METHODS = frozenset({"chat.postMessage", "chat.update", "chat.postEphemeral"})

Json = dict[str, Any]


def as_dicts(blocks: Sequence[Block | Json]) -> list[Json]:
    return [b.to_dict() if isinstance(b, Block) else b for b in blocks]


def text_length(blocks: Sequence[Block | Json]) -> int:
    """Characters of text across the blocks: every `text` string in them, as Slack counts."""
    return sum(len(t) for t in _texts(as_dicts(blocks)))


def texts_of(block: Block | Json) -> list[str]:
    """Every text string of one block, in order."""
    return list(_texts(as_dicts([block])))


def fits(text: str | None, blocks: Sequence[Block | Json]) -> bool:
    return not problems(text, blocks)


class OverLimits(ValueError):
    """A message refused before it was sent: Slack would have answered `error`."""

    def __init__(self, error: str, problems: list[str]) -> None:
        super().__init__(f"{error}: {'; '.join(problems)}")
        self.error = error
        self.problems = problems


def outgoing(message: Json) -> Json:
    """The message as it may leave: its `text` cut to Slack's limit (ending "…"). Raises
    `OverLimits` when its blocks break one of Slack's limits (counted as Slack does: 12,000
    characters across them, not the bot's own budget)."""
    text, blocks = message.get("text"), message.get("blocks")
    if isinstance(text, str) and len(text) > FALLBACK_TEXT:
        message = {**message, "text": text[: FALLBACK_TEXT - 1] + "…"}
    if not isinstance(blocks, list | tuple):
        return message
    found = problems(None, blocks, BLOCKS_TEXT)
    if found:
        too_long = text_length(blocks) > BLOCKS_TEXT
        raise OverLimits("msg_blocks_too_long" if too_long else "invalid_blocks", found)
    return message


def problems(
    text: str | None, blocks: Sequence[Block | Json], budget: int = TEXT_BUDGET
) -> list[str]:
    """What the message breaks of Slack's limits, each said in a line; [] when it fits.
    `budget`: the characters of text across the blocks (the bot's own budget by default)."""
    found = []
    if text is not None and len(text) > FALLBACK_TEXT:
        found.append(f"text: {len(text)} characters > {FALLBACK_TEXT}")
    dicts = as_dicts(blocks)
    if len(dicts) > BLOCKS:
        found.append(f"{len(dicts)} blocks > {BLOCKS}")
    total = text_length(dicts)
    if total > budget:
        found.append(f"{total} characters of text across the blocks > {budget}")
    for i, block in enumerate(dicts):
        found += [f"block {i} ({block.get('type')}): {p}" for p in _block_problems(block)]
    return found


def _texts(value: object) -> Iterator[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "text" and isinstance(inner, str):
                yield inner
            else:
                yield from _texts(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _texts(inner)


def _text_of(obj: object) -> str:
    return str(obj.get("text") or "") if isinstance(obj, dict) else ""


def _over(what: str, value: str, limit: int) -> list[str]:
    return [f"{what}: {len(value)} characters > {limit}"] if len(value) > limit else []


def _block_problems(block: Json) -> list[str]:
    found = _over("block_id", str(block.get("block_id") or ""), BLOCK_ID)
    kind = block.get("type")
    if kind == "section":
        found += _over("text", _text_of(block.get("text")), SECTION_TEXT)
        fields = block.get("fields") or []
        if len(fields) > FIELDS:
            found.append(f"{len(fields)} fields > {FIELDS}")
        for field in fields:
            found += _over("field", _text_of(field), FIELD_TEXT)
        if block.get("accessory"):
            found += _element_problems(block["accessory"])
    elif kind == "header":
        found += _over("header", _text_of(block.get("text")), HEADER_TEXT)
    elif kind == "context":
        elements = block.get("elements") or []
        if len(elements) > CONTEXT_ELEMENTS:
            found.append(f"{len(elements)} elements > {CONTEXT_ELEMENTS}")
        for element in elements:
            found += _over("element", _text_of(element), SECTION_TEXT)
    elif kind == "actions":
        elements = block.get("elements") or []
        if len(elements) > ACTIONS_ELEMENTS:
            found.append(f"{len(elements)} elements > {ACTIONS_ELEMENTS}")
        for element in elements:
            found += _element_problems(element)
    return found


def _element_problems(element: Json) -> list[str]:
    found = []
    if element.get("type") == "button":
        found += _over("button text", _text_of(element.get("text")), BUTTON_TEXT)
        found += _over("button value", str(element.get("value") or ""), BUTTON_VALUE)
    confirm = element.get("confirm")
    if isinstance(confirm, dict):
        found += _over("confirm title", _text_of(confirm.get("title")), CONFIRM_TITLE)
        found += _over("confirm text", _text_of(confirm.get("text")), CONFIRM_TEXT)
        found += _over("confirm button", _text_of(confirm.get("confirm")), CONFIRM_BUTTON)
        found += _over("confirm button", _text_of(confirm.get("deny")), CONFIRM_BUTTON)
    return found
