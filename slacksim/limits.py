"""Slack's size limits on a message, enforced as Slack enforces them.

From Slack's Block Kit reference and what chat.postMessage answers (bolt-js #2509, #2867):
- at most 50 blocks in a message; a section's text at most 3,000 characters, its fields at
  most 10 of at most 2,000 each; a header's text at most 150; a context at most 10 elements; a
  button's text at most 75 and its value at most 2,000; a block_id at most 255. Breaking one of
  these is `invalid_blocks`.
- about 12,000 characters of text across all the blocks together: `msg_blocks_too_long`.
- the `text` argument (the notification fallback) at most 40,000 characters: `msg_too_long`.

`refusal(params)` is the error code Slack answers for a message's text and blocks, or None.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

MAX_TEXT = 40_000  # the `text` argument
MAX_BLOCKS = 50  # blocks in one message
MAX_BLOCKS_TEXT = 12_000  # characters of text across every block of one message
MAX_SECTION_TEXT = 3_000
MAX_FIELDS = 10
MAX_FIELD_TEXT = 2_000
MAX_HEADER_TEXT = 150
MAX_CONTEXT_ELEMENTS = 10
MAX_ACTIONS_ELEMENTS = 25
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2_000
MAX_BLOCK_ID = 255
MAX_CONFIRM_TITLE = 100
MAX_CONFIRM_TEXT = 300
MAX_CONFIRM_BUTTON = 30
MAX_MARKDOWN_BLOCK = 12_000

Json = dict[str, Any]


def refusal(params: Json) -> str | None:
    """The error Slack answers for the message's `text` and `blocks`, or None when they fit."""
    text, blocks = params.get("text"), params.get("blocks")
    if isinstance(text, str) and len(text) > MAX_TEXT:
        return "msg_too_long"
    if blocks is None:
        return None
    if not isinstance(blocks, list):
        return "invalid_blocks_format"
    if len(blocks) > MAX_BLOCKS or not all(_block_fits(b) for b in blocks):
        return "invalid_blocks"
    if sum(len(t) for t in _texts(blocks)) > MAX_BLOCKS_TEXT:
        return "msg_blocks_too_long"
    return None


def _texts(value: object) -> Iterator[str]:
    """Every `text` string anywhere inside the blocks."""
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


def _block_fits(block: object) -> bool:
    if not isinstance(block, dict):
        return False
    if len(str(block.get("block_id") or "")) > MAX_BLOCK_ID:
        return False
    kind = block.get("type")
    if kind == "section":
        return _section_fits(block)
    if kind == "header":
        return 0 < len(_text_of(block.get("text"))) <= MAX_HEADER_TEXT
    if kind == "context":
        elements = block.get("elements") or []
        return 0 < len(elements) <= MAX_CONTEXT_ELEMENTS and all(
            len(_text_of(e)) <= MAX_SECTION_TEXT for e in elements
        )
    if kind == "actions":
        elements = block.get("elements") or []
        return 0 < len(elements) <= MAX_ACTIONS_ELEMENTS and all(_element_fits(e) for e in elements)
    if kind == "markdown":
        return len(str(block.get("text") or "")) <= MAX_MARKDOWN_BLOCK
    return True


def _section_fits(block: Json) -> bool:
    text, fields = block.get("text"), block.get("fields")
    if text is None and not fields:
        return False
    if len(_text_of(text)) > MAX_SECTION_TEXT:
        return False
    if fields is not None and (
        len(fields) > MAX_FIELDS or any(len(_text_of(f)) > MAX_FIELD_TEXT for f in fields)
    ):
        return False
    accessory = block.get("accessory")
    return accessory is None or _element_fits(accessory)


def _element_fits(element: object) -> bool:
    if not isinstance(element, dict):
        return False
    if element.get("type") == "button":
        if len(_text_of(element.get("text"))) > MAX_BUTTON_TEXT:
            return False
        if len(str(element.get("value") or "")) > MAX_BUTTON_VALUE:
            return False
    confirm = element.get("confirm")
    if isinstance(confirm, dict):
        return (
            len(_text_of(confirm.get("title"))) <= MAX_CONFIRM_TITLE
            and len(_text_of(confirm.get("text"))) <= MAX_CONFIRM_TEXT
            and len(_text_of(confirm.get("confirm"))) <= MAX_CONFIRM_BUTTON
            and len(_text_of(confirm.get("deny"))) <= MAX_CONFIRM_BUTTON
        )
    return True
