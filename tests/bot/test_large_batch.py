"""A batch too large for one Slack message, end to end through slacksim (which refuses what
Slack refuses): its root summarises and its thread has the whole table, paged; and a batch over
`max_batch_nodes` is refused with one answer, nothing asked."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot import slack_limits
from joinops.requests.lifecycle import State
from kubesim import NodeSpec, World
from tests.bot.harness import CHANNEL, ack_text, text_of
from tests.support.clusters import add_standard_clusters

COUNT = 80


def long_name(i: int) -> str:
    return (f"ip-10-0-{i // 250}-{i % 250}.eu-west-1.compute.internal-pool-" + "x" * 63)[:63]


@pytest.fixture
def world() -> Iterator[World]:
    """The standard clusters and `big`: 80 workers, each name 63 characters."""
    with World(pod_grace_seconds=0.05, join_seconds=0.1) as w:
        add_standard_clusters(w)
        w.add_cluster(
            "big", version="v1.32.2", nodes=[NodeSpec(long_name(i)) for i in range(COUNT)]
        )
        yield w


def test_a_large_batch_root_summarises_and_its_thread_has_the_whole_table(bot, sim):
    names = [long_name(i) for i in range(COUNT)]

    bot.slash("all from big to clusterB")  # by name, 4,000 characters hold ~60 of them
    batch = bot.request_from_message(bot.wait_message(timeout=120))
    root_text = text_of(bot.root(batch.id))
    assert f"The table of all {COUNT} nodes is in the thread" in root_text
    assert f"*Nodes*: {COUNT} waiting" in root_text

    pages = bot.wait_thread(batch.id, lambda r: len(r) >= 2, timeout=20)
    assert pages[0].startswith("*The table*, part 1 of ")
    table = "\n".join(pages)
    assert all(node in table for node in names)
    rows = [line for line in table.splitlines() if line.startswith("ip-10-0-")]
    assert sorted(line.split()[0] for line in rows) == sorted(names)  # each node once

    _, rid = bot.slash(f"cancel {batch.id}")
    assert "nothing was moved" in bot.wait_answer(rid)

    def final_table(replies: list[str]) -> str:
        return "\n".join(r for r in replies if r.startswith("*Where each node ended*"))

    ended = bot.wait_thread(batch.id, lambda r: all(n in final_table(r) for n in names))
    assert any(r.startswith(":white_circle:") for r in ended)
    assert "not run" in final_table(ended)
    assert bot.request(batch.id).state is State.CANCELLED

    every = [*sim.messages(CHANNEL).values(), *sim.thread(CHANNEL, batch.message_ts)]
    for message in every:  # what slacksim accepted is within the bot's own margins too
        assert slack_limits.problems(message.get("text"), message.get("blocks") or []) == []
    assert not [c for c in sim.calls if c.response.get("error")]


def test_a_join_of_4000_characters_naming_300_nodes_gets_one_answer_and_nothing_is_asked(bot, sim):
    nodes = [f"node-{i:03d}-abc" for i in range(300)]
    text = " ".join(nodes) + " to clusterB"
    assert 3_900 <= len(text) <= 4_000  # Slack's most for a slash command's text

    delivery, rid = bot.slash(text)

    answer = ack_text(delivery)
    assert "Too many nodes for one request: that names 300 nodes" in answer
    assert "at most 200" in answer and "Split it" in answer and "Nothing was asked" in answer
    assert bot.answers(rid) == []  # the ack is the whole answer: no "checking…" to follow
    assert bot.ctx.store.recent(10) == []
    assert bot.messages() == [] and sim.calls_to("chat.postMessage") == []


def test_all_from_a_cluster_larger_than_the_limit_is_refused_after_listing_it(make_bot, sim):
    bot = make_bot(max_batch_nodes=2)
    _, rid = bot.slash("all from clusterA to clusterB")

    answer = bot.sim.wait_for(
        lambda: [a for a in bot.answers(rid) if "Too many nodes" in a], timeout=20
    )[-1]
    assert "every node of clusterA is" in answer and "at most 2 " in answer
    assert bot.ctx.store.recent(10) == []
    assert bot.messages() == []
