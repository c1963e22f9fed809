"""Every message the bot builds is within Slack's limits, in the largest case it allows: a batch
of 200 nodes (`max_batch_nodes`' default), each name 63 characters, every row carrying findings,
in each state the root message goes through — plus the thread's pages and the long replies."""

from __future__ import annotations

from typing import Any

import pytest
from slack_sdk.models.blocks import Block

from bot import slack_limits
from bot.batch_record import STATUS_CELL, Row
from bot.render import batch as render_batch
from bot.render import pages as render_pages
from bot.render import report as render_report
from bot.texts import batch as batch_texts
from bot.views import batch as batch_views
from bot.views import report as report_views
from joinops.requests.lifecycle import State
from joinops.requests.model import Version
from joinops.requests.store import Request
from joinops.rules import texts as rule_texts

COUNT = 200
TARGET = "clusterB"
REQUESTER = "U0USER0001"
PODS = [f"app-{i:03d}-5f7d8c9b4-x2k9q" for i in range(40)]


def name(i: int) -> str:
    """A node name of exactly 63 characters (the longest DNS label)."""
    stem = f"ip-10-0-{i // 250}-{i % 250}-worker-pool"
    return (stem + "-" + "x" * 63)[:63]


def every_finding(node: str) -> tuple[tuple[str, str, str], ...]:
    v = Version(1, 31, 4)
    return (
        ("REFUSAL", "uncontrolled-pods", rule_texts.uncontrolled_pods(node, PODS)),
        ("REFUSAL", "local-volume", rule_texts.local_volume_pods(node, PODS)),
        ("WARNING", "empty-dir", rule_texts.empty_dir_pods(node, PODS)),
        ("WARNING", "version", rule_texts.version_newer(node, v, TARGET, Version(1, 30, 2))),
        ("NOTE", "destroys-source", rule_texts.destroys_source(node, "clusterA-" + "s" * 50)),
    )


ROWS = [
    Row(
        node=name(i),
        source=f"source-cluster-{i % 16:02d}-" + "c" * 40,
        role="control-plane" if i % 50 == 0 else "worker",
        kubelet="v1.31.4",
        target_version="v1.32.2",
        after=tuple(name(j) for j in range(max(0, i - 3), i)),
        findings=every_finding(name(i)),
        destroys=i % 16 == 15,
        forced=3,
    )
    for i in range(COUNT)
]
BATCH_FINDINGS = [("REFUSAL", rule_texts.batch_leaves_nodes_without_control_plane("clusterA"))] * 5
STATES = [State.SUCCEEDED, State.RUNNING, State.FAILED, State.APPROVED, State.CANCELLED]


def batch(state: State) -> Request:
    return Request(
        id="b0123456789",
        node="",
        source="",
        target=TARGET,
        kind="batch",
        state=state,
        requester=REQUESTER,
        channel="C1",
        message_ts="1.1",
        expires_at=2e9,
        decided_by="UAPPROVER1",
        outcome="Batch finished in 41 min: 80 of 200 moved, 40 failed, 80 not run.",
    )


def kids(state: State) -> dict[str, Request]:
    """The children: all pending for a pending batch, else a mix of every state."""
    made = {}
    for i, row in enumerate(ROWS):
        child_state = State.PENDING if state is State.PENDING else STATES[i % len(STATES)]
        made[row.node] = Request(
            id=f"c{i:010d}",
            node=row.node,
            source=row.source,
            target=TARGET,
            state=child_state,
            parent="b0123456789",
            failed_step="drain" if child_state is State.FAILED else "",
            extra={STATUS_CELL: "4/9 drain: evicting 37 pods, 12 left " + "z" * 40},
        )
    return made


def stored(state: State) -> batch_views.BatchView:
    children = kids(state)
    return batch_views.view(
        requester=REQUESTER,
        target=TARGET,
        rows=ROWS,
        findings=BATCH_FINDINGS,
        max_parallel=16,
        status=batch_views.status_line(batch(state), list(children.values())),
        batch=batch(state),
        kids=children,
    )


def refused() -> batch_views.BatchView:
    return batch_views.view(
        requester=REQUESTER,
        target=TARGET,
        rows=ROWS,
        findings=BATCH_FINDINGS,
        max_parallel=16,
        status=batch_texts.refused_status(),
        force=True,
    )


def text(blocks: list[Block]) -> str:
    return "\n".join(t for b in slack_limits.as_dicts(blocks) for t in slack_limits.texts_of(b))


def assert_fits(fallback: str | None, blocks: list[Block] | list[Any]) -> None:
    assert slack_limits.problems(fallback, blocks) == []


VIEWS = {
    "refused": refused,
    **{str(s): (lambda s=s: stored(s)) for s in (State.PENDING, State.RUNNING, State.FAILED)},
}


@pytest.mark.parametrize("which", list(VIEWS))
def test_the_largest_batch_root_summarises_within_the_limits(which: str) -> None:
    view = VIEWS[which]()
    root = render_batch.batch_message(view)

    assert_fits(view.fallback, root)
    assert render_batch.summarised(view)
    shown = text(root)
    assert view.in_thread in shown
    assert "more: the thread" in shown  # the refusals (and rows) left out are counted
    if which != "refused":
        assert view.summary in shown and "*Nodes*:" in view.summary
    if which == str(State.RUNNING):
        assert "40 running" in view.summary and "40 failed" in view.summary
        assert name(1) in shown  # a running node is in the root's short table


@pytest.mark.parametrize("which", list(VIEWS))
def test_the_thread_gets_the_whole_table_and_every_finding_paged_to_fit(which: str) -> None:
    view = VIEWS[which]()
    pages = render_batch.thread_pages(view)

    assert len(pages) > 2
    for page in pages:
        assert_fits(render_pages.text_of(page), page)
    everything = "\n".join(text(p) for p in pages)
    assert all(row.node in everything for row in ROWS)
    table_lines = [line for line in everything.splitlines() if line.startswith("ip-10-0-")]
    assert len({line.split()[0] for line in table_lines}) == COUNT
    assert all(t in everything for _, _, t in every_finding(name(7)))  # in full


def test_the_final_table_is_paged_too() -> None:
    view = stored(State.FAILED)
    pages = render_batch.thread_pages(view, batch_texts.final_table_page, with_findings=False)

    assert pages and all(slack_limits.fits(None, p) for p in pages)
    assert text(pages[0]).startswith(batch_texts.final_table_page(1, len(pages)))


def test_a_small_batch_keeps_its_whole_table_in_the_root() -> None:
    small = batch_views.view(
        requester=REQUESTER,
        target=TARGET,
        rows=[
            Row(f"node-{i}", "clusterA", "worker", "v1.31.4", "v1.32.2", (), ()) for i in range(3)
        ],
        findings=[],
        max_parallel=4,
        status="",
        batch=batch(State.PENDING),
        kids={},
    )
    assert not render_batch.summarised(small)
    assert render_batch.thread_pages(small) == []
    assert "node-2" in text(render_batch.batch_message(small))


def test_a_failed_reply_naming_200_nodes_is_paged_and_every_command_fits_one_section() -> None:
    not_moved = [row.node for row in ROWS]
    reply = batch_texts.failed_reply(
        REQUESTER, "Batch finished: 0 of 200 moved.", not_moved, TARGET
    )
    pages = render_pages.reply_pages(reply)

    for page in pages:
        assert_fits(render_pages.text_of(page), page)
    commands = [line for line in reply.splitlines() if line.startswith("`/join ")]
    assert len(commands) > 1 and all(len(c) <= 3000 for c in commands)
    named = [n for c in commands for n in c.strip("`").split()[1:-2]]
    assert named == not_moved  # every node once, in order, across the commands


def test_a_status_answer_of_a_200_node_batch_is_cut_with_and_n_more() -> None:
    children = kids(State.RUNNING)
    report = report_views.batch_status_view(batch(State.RUNNING), list(children.values()))
    blocks = render_report.report(report)

    assert_fits(report.text, blocks)
    assert "more, not shown" in text(blocks)


def test_the_checker_names_what_a_message_breaks() -> None:
    over = [{"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3001}}] * 51
    found = slack_limits.problems("t" * 40_001, over)
    assert any("51 blocks" in p for p in found)
    assert any("text: 40001" in p for p in found)
    assert any("block 0 (section): text: 3001" in p for p in found)
    assert any("across the blocks" in p for p in found)
