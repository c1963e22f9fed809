"""A batch's message, from its `BatchView`: refusals, the table, the other findings, the order.

Within Slack's limits (`bot.slack_limits`): when the whole message fits, it is the message.
When it does not (a large batch, long node names, many findings), the root summarises — the
nodes counted by state, the nodes running or failed, the refusals and findings cut with "and N
more" — and `thread_pages` gives the table and every finding in full for the request's thread,
paged into messages that each fit.
"""

from __future__ import annotations

from collections.abc import Callable

from slack_sdk.models.blocks import Block

from bot import slack_limits
from bot.render.blocks import closing, context, fields, header, section, sections, table
from bot.render.pages import capped, capped_table, line_pages, table_pages
from bot.views.batch import BatchView

REFUSALS_BUDGET = 2_500  # characters of the summary's refusals
WATCHED_BUDGET = 3_000  # of its table of nodes running or failed
FINDINGS_BUDGET = 1_200  # of its warnings and notes


def batch_message(view: BatchView) -> list[Block]:
    whole = _whole(view)
    return whole if slack_limits.fits(view.fallback, whole) else _summary(view)


def summarised(view: BatchView) -> bool:
    """Does the root only summarise (the table and the findings then go into the thread)?"""
    return not slack_limits.fits(view.fallback, _whole(view))


def thread_pages(
    view: BatchView, title: Callable[[int, int], str] | None = None, with_findings: bool = True
) -> list[list[Block]]:
    """The table and every finding in full, for the thread of a summarised root; [] when the
    root holds them. `title` opens each page of the table (default: the view's)."""
    if not summarised(view):
        return []
    pages = table_pages(view.columns, view.rows, title or view.page_title) if view.rows else []
    found = [*view.refusals, *view.findings] if with_findings else []
    if found:
        pages += line_pages([view.findings_title, *found])
    return pages


def _whole(view: BatchView) -> list[Block]:
    blocks: list[Block] = [header(view.header), fields(view.fields)]
    blocks += sections(view.refusals)
    blocks += table(view.columns, view.rows) if view.rows else [section(view.no_rows)]
    blocks += sections(view.findings)
    if view.order:
        blocks.append(context(view.order))
    return blocks + closing(view.closing)


def _summary(view: BatchView) -> list[Block]:
    blocks: list[Block] = [header(view.header), fields(view.fields)]
    blocks += capped(view.refusals, REFUSALS_BUDGET, view.more_lines, max_blocks=3)
    if view.summary:
        blocks.append(section(view.summary))
    if view.watched:
        blocks.append(section(view.watched_title))
        blocks += capped_table(view.columns, view.watched, WATCHED_BUDGET, view.more_rows)
    blocks.append(context(view.in_thread))
    blocks += capped(view.findings, FINDINGS_BUDGET, view.more_lines, max_blocks=2)
    if view.order:
        blocks.append(context(view.order))
    return blocks + closing(view.closing)
