"""A batch's order says how many nodes run at once, and that is what its workers do: with
`max_parallel: auto` the number is chosen when the batch is planned (the live workers' share,
capped by the target's join admission), shown in its message, stored on it and kept to even if
workers come or go afterwards. End to end: slacksim, real `joinops worker` processes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from joinops import parallelism
from joinops.requests.events import EventKind
from kubesim import NodeSpec, World
from tests.bot.harness import text_of, until
from tests.support.clusters import add_single_node_hosts

HOSTS = 4
AUTO = {"max_parallel": "auto", "joins_per_worker": 1, "join_admission": 32}


@pytest.fixture
def world() -> Iterator[World]:
    """clusterB, and four hosts each booted into a single-node cluster of its own."""
    with World(pod_grace_seconds=0.05, join_seconds=0.3) as w:
        w.add_cluster(
            "clusterB",
            version="v1.32.2",
            control_plane_endpoint="cp.b.test:6443",
            nodes=[NodeSpec("b-cp-1", role="control-plane")],
        )
        add_single_node_hosts(w, HOSTS)
        yield w


def _ended(replies: list[str]) -> bool:
    return any(r.startswith((":tada:", ":red_circle:", ":white_circle:")) for r in replies)


def _peak(bot, batch_id: str) -> int:  # type: ignore[no-untyped-def]
    """The most nodes migrating at once, from each one's first step to its final event."""
    points: list[tuple[float, int]] = []
    for child_id in bot.request(batch_id).extra["children"].split(","):
        events = bot.ctx.events.history(child_id)
        points.append((min(e.at for e in events if e.kind is EventKind.STEP_STARTED), 1))
        points.append((max(e.at for e in events if e.is_final), -1))
    level = most = 0
    for _, step in sorted(points):
        level += step
        most = max(most, level)
    return most


def test_the_plan_says_the_width_auto_chose_and_the_batch_keeps_to_it(make_bot):
    bot = make_bot(**AUTO)
    bot.start_worker()
    bot.start_worker()
    until(lambda: parallelism.live_workers(bot.redis) == 2, 120)

    bot.slash(" ".join(f"node-{i}" for i in range(1, HOSTS + 1)) + " to clusterB")
    message = bot.wait_message(timeout=60)
    batch = bot.request_from_message(message)
    # two live workers, one join each (joins_per_worker), under the admission of 32
    assert "*Order*: up to 2 nodes at once; control-plane joins into clusterB" in text_of(message)
    assert parallelism.stored(batch.extra) == 2

    bot.start_worker()  # a worker more after the plan: the batch keeps what its message says
    until(lambda: parallelism.live_workers(bot.redis) == 3, 120)
    bot.approve(batch.id)
    replies = bot.wait_thread(batch.id, _ended, timeout=120)
    assert replies[-1].startswith(":tada:"), replies[-1]
    assert parallelism.stored(bot.request(batch.id).extra) == 2
    assert _peak(bot, batch.id) <= 2  # four nodes, three workers: never more than it said


def test_the_targets_join_admission_caps_what_the_workers_could_take(make_bot):
    bot = make_bot(max_parallel="auto", joins_per_worker=16, join_admission=1)
    bot.start_worker()
    until(lambda: parallelism.live_workers(bot.redis) == 1, 120)

    bot.slash("node-1 node-2 to clusterB")
    message = bot.wait_message(timeout=60)
    batch = bot.request_from_message(message)
    assert "*Order*: one node at a time; control-plane joins into clusterB" in text_of(message)
    bot.approve(batch.id)
    replies = bot.wait_thread(batch.id, _ended, timeout=120)
    assert replies[-1].startswith(":tada:"), replies[-1]
    assert _peak(bot, batch.id) == 1
