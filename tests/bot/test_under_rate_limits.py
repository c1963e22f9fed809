"""Many requests at once against a Slack that enforces its rate tiers (slacksim's Tiers at the
harness's speed): 25 single migrations approved together, and one 16-node batch. Every thread
reply arrives once and in its order (a post whose answer is lost under load is looked for before
the thread goes on: bot/post_once.py), each step's reply is edited in place to its end, and
every root message ends showing the final state — a 429 delays a reply, never loses, repeats or
reorders it, and a stale render never lands last.

Two real `joinops worker` processes drive them (waiting steps park, so two are enough).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis

from joinops.requests.lifecycle import State
from kubesim import NodeSpec, World
from tests.bot.harness import APPROVER, CHANNEL, REQUESTER, buttons, text_of
from tests.support.clusters import write_config
from tests.support.engine import start_worker, stop_worker

SINGLES = [f"r-w-{i:02}" for i in range(1, 26)]
BATCH = [f"host-{i:02}" for i in range(1, 17)]
STEPS = ["check", "join-material", "probe", "cordon", "drain", "agent", "wait-joined", "cleanup"]


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    with World(pod_grace_seconds=0.05, join_seconds=0.1) as w:
        w.add_cluster(
            "clusterA",
            version="v1.31.4",
            control_plane_endpoint="cp.a.test:6443",
            nodes=[NodeSpec("a-cp-1", role="control-plane"), *(NodeSpec(n) for n in SINGLES)],
        )
        w.add_cluster(
            "clusterB",
            version="v1.32.2",
            control_plane_endpoint="cp.b.test:6443",
            nodes=[NodeSpec("b-cp-1", role="control-plane")],
        )
        for name in BATCH:  # one host each, booted into a single-node cluster of its own
            w.add_cluster(
                name,
                version="v1.32.1",
                control_plane_endpoint=f"{name}.test:6443",
                nodes=[NodeSpec(f"{name}-n", role="control-plane")],
            )
        yield w


@pytest.fixture
def redis_client(shared_redis: redis.Redis) -> redis.Redis:
    return shared_redis  # not flushed per test: the module's workers keep their keys


@pytest.fixture(scope="module")
def workers(world, shared_redis, redis_url_module, tmp_path_factory):  # type: ignore[no-untyped-def]
    directory = tmp_path_factory.mktemp("workers")
    config = write_config(world, directory, max_parallel=16)
    processes = [
        start_worker(config, redis_url_module, directory / f"worker-{i}.log") for i in (1, 2)
    ]
    yield processes
    for process in processes:
        stop_worker(process)


@pytest.fixture
def bot(make_bot, workers):  # type: ignore[no-untyped-def]
    # one requester asks for all 25 at once: above the default limit of open requests (20)
    return make_bot(max_parallel=16, policy={"max_open_requests_per_user": 100})


def _ended(replies: list[str]) -> bool:
    return any(r.startswith((":tada:", ":red_circle:", ":white_circle:")) for r in replies)


def _shape(reply: str, request_id: str, node: str) -> str:
    """A reply with what differs between runs and nodes taken out (ids, names, times)."""
    reply = reply.replace(request_id, "REQ").replace(node, "NODE")
    reply = re.sub(r"<!date\^\d+\^[^|>]*\|[^>]*>", "<DATE>", reply)
    reply = re.sub(r"bootstrap token [a-z0-9]{6}\b", "bootstrap token ID", reply)
    reply = re.sub(r"with address [0-9.]+\d", "with address IP", reply)
    return re.sub(r"\b\d+(\.\d+)? ?(s|ms|min)\b", "T", reply)


def test_25_migrations_at_once_get_every_reply_once_in_order_and_end_in_their_state(bot, world):
    with ThreadPoolExecutor(max_workers=25) as pool:
        asked = list(pool.map(lambda n: bot.slash(f"{n} from clusterA to clusterB")[0], SINGLES))
    assert all(delivery.status == 200 for delivery in asked)
    roots = bot.sim.wait_for(lambda: len(bot.messages()) >= 25 and bot.messages(), timeout=60)
    requests = [bot.request_from_message(m) for m in roots]
    by_node = {r.node: r for r in requests}
    assert sorted(by_node) == SINGLES  # one request message per command, none twice

    with ThreadPoolExecutor(max_workers=25) as pool:
        clicked = list(pool.map(lambda r: bot.approve(r.id)[0], requests))
    assert all(delivery.status == 200 for delivery in clicked)

    shapes = set()
    for node, request in by_node.items():
        replies = bot.wait_thread(request.id, _ended, timeout=240)
        # the engine outruns one post a second per channel: steps that ended while their
        # thread waited for its turn share a reply, a line each (bot/step_replies.py)
        lines = [line for r in replies[:-1] for line in r.split("\n")]
        steps = [line.split("`")[1] for line in lines]
        assert steps == STEPS, (node, replies)  # each step shown once, in order, none twice
        assert all(line.startswith(":white_check_mark: Step ") for line in lines), replies
        assert replies[-1].startswith(f":tada: <@{REQUESTER}> done: `{node}` moved"), replies
        # each reply notified once; the step replies' edits, none
        assert bot.sim.notifications(CHANNEL, request.message_ts) == len(replies) <= len(STEPS) + 1
        shapes.add(tuple(_shape(line, request.id, node) for line in [*lines, replies[-1]]))
    assert len(shapes) == 1  # every thread tells the same story, in the same order

    for node, request in by_node.items():
        root = bot.wait_root(request.id, lambda t: "Succeeded" in t, timeout=60)
        assert buttons(root) == [] and "Waiting for an approver" not in text_of(root)
        assert bot.request(request.id).state is State.SUCCEEDED
        assert world.cluster("clusterB").node(node) is not None
    late = [c for c in bot.sim.calls if c.status == 429]  # met and waited out, if any
    assert {c.method for c in late} <= {"chat.update", "chat.postMessage"}


def test_a_16_node_batch_gets_one_line_per_node_once_and_its_root_ends_moved(bot, world):
    bot.slash(" ".join(f"{name}-n" for name in BATCH) + " to clusterB")
    batch = bot.request_from_message(bot.wait_message(timeout=60))
    bot.approve(batch.id)

    replies = bot.wait_thread(batch.id, _ended, timeout=240)
    assert replies[0].startswith(f"Approved by <@{APPROVER}>")
    lines = [r for r in replies if r.startswith(":white_check_mark: `")]
    assert sorted(line.split("`")[1] for line in lines) == sorted(f"{n}-n" for n in BATCH)
    assert replies[-1].startswith(f":tada: <@{REQUESTER}> Batch finished in ")
    assert "16 of 16 moved, 0 failed, 0 not run." in replies[-1]
    assert len([r for r in replies if r == replies[-1]]) == 1

    root = bot.wait_root(batch.id, lambda t: "16 of 16 moved" in t, timeout=60)
    assert buttons(root) == []
    assert bot.request(batch.id).state is State.SUCCEEDED
    assert all(world.cluster("clusterB").node(f"{n}-n") is not None for n in BATCH)
