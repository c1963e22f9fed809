"""Long content within Slack's limits (`bot.slack_limits`): cut to a budget with "and N more",
or paged into several messages that each fit (a thread's table, a long reply)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from slack_sdk.models.blocks import Block

from bot import slack_limits
from bot.render.blocks import reply, section, sections, table

More = Callable[[int], str]  # the line that stands for n lines left out


def capped(lines: Sequence[str], budget: int, more: More, max_blocks: int = 8) -> list[Block]:
    """Sections of the first lines that fit `budget` characters and `max_blocks` blocks; the
    lines left out are one last line, `more(n)`."""
    for shown in range(_within(lines, budget), -1, -1):
        left = len(lines) - shown
        kept = list(lines[:shown]) + ([more(left)] if left else [])
        blocks = sections(kept)
        if len(blocks) <= max_blocks and slack_limits.text_length(blocks) <= budget:
            return blocks
    return sections([more(len(lines))])


def _within(lines: Sequence[str], budget: int) -> int:
    """How many of the first lines could fit `budget` at most, counting only their text."""
    total = 0
    for i, line in enumerate(lines):
        total += min(len(line), slack_limits.SECTION_TEXT) + 1
        if total > budget:
            return i
    return len(lines)


def capped_table(
    columns: Sequence[str], rows: Sequence[Sequence[str]], budget: int, more: More
) -> list[Block]:
    """A table of the first rows that fit `budget` characters; `more(n)` says how many not."""
    widths = [max(len(r[i]) for r in (columns, *rows)) for i in range(len(columns))]
    start = min(len(rows), budget // (sum(widths) + 2 * len(widths)) + 1)
    for shown in range(start, 0, -1):
        blocks = table(columns, rows[:shown])
        left = len(rows) - shown
        if left:
            blocks.append(section(more(left)))
        if slack_limits.text_length(blocks) <= budget:
            return blocks
    return [section(more(len(rows)))] if rows else []


def paged(
    blocks: Sequence[Block], title: Callable[[int, int], str] | None = None
) -> list[list[Block]]:
    """Blocks cut into messages that each fit; `title(page, pages)` opens each page when there
    are several."""
    room = slack_limits.TEXT_BUDGET - (len(title(99, 99)) if title else 0)
    pages: list[list[Block]] = [[]]
    for block in blocks:
        page = pages[-1]
        full = len(page) + 2 > slack_limits.BLOCKS
        if page and (full or slack_limits.text_length([*page, block]) > room):
            pages.append([])
        pages[-1].append(block)
    if title and len(pages) > 1:
        return [[section(title(i, len(pages))), *p] for i, p in enumerate(pages, 1)]
    return pages


def table_pages(
    columns: Sequence[str], rows: Sequence[Sequence[str]], title: Callable[[int, int], str]
) -> list[list[Block]]:
    """A whole table over as many messages as it needs, each opened by `title`."""
    return paged(table(columns, rows), title)


def line_pages(lines: Sequence[str]) -> list[list[Block]]:
    """Lines over as many messages as they need (a long thread reply)."""
    return paged(sections(lines))


def reply_pages(text: str) -> list[list[Block]]:
    """A thread reply's blocks: one message when it fits, else as many as it needs."""
    blocks = reply(text)
    return [blocks] if slack_limits.fits(None, blocks) else paged(blocks)


def text_of(page: Sequence[Block]) -> str:
    """A page's notification text: its text, as far as the fallback may go."""
    texts = [t for b in slack_limits.as_dicts(page) for t in slack_limits.texts_of(b)]
    return "\n".join(texts)[: slack_limits.FALLBACK_TEXT]
