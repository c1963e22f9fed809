"""End to end: slash command → request message → click → a real `joinops worker` → thread.

One world and one worker process serve the whole module (a worker takes seconds to start): each
test moves nodes of its own, and Redis is flushed around the module rather than each test.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis

from joinops.requests.events import EventKind, RedisEventLog
from joinops.requests.lifecycle import State
from joinops.requests.steprecords import Outcome
from kubesim import NodeSpec, World
from tests.bot.harness import (
    APPROVER,
    APPROVER2,
    CHANNEL,
    GROUP_MEMBER,
    REQUESTER,
    HeldClusterRequest,
    ack_text,
    buttons,
    text_of,
)
from tests.support.clusters import write_config
from tests.support.engine import start_worker, stop_worker

STEPS = ["check", "join-material", "probe", "cordon", "drain", "agent", "wait-joined", "cleanup"]
DRAIN = "3s"  # long enough to cancel a blocked drain, short enough to wait for its failure


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    with World(pod_grace_seconds=0.05, join_seconds=0.1) as w:
        w.add_cluster(
            "clusterA",
            version="v1.31.4",
            control_plane_endpoint="cp.a.test:6443",
            nodes=[
                NodeSpec("a-cp-1", role="control-plane"),
                *(NodeSpec(f"a-w-{i}") for i in range(1, 6)),
            ],
        )
        w.add_cluster(
            "clusterB",
            version="v1.32.2",
            control_plane_endpoint="cp.b.test:6443",
            nodes=[NodeSpec("b-cp-1", role="control-plane"), NodeSpec("b-w-1")],
        )
        yield w


@pytest.fixture
def redis_client(shared_redis: redis.Redis) -> redis.Redis:
    return shared_redis  # not flushed per test: the module's worker keeps its keys


@pytest.fixture(scope="module")
def worker(world, shared_redis, redis_url_module, tmp_path_factory):  # type: ignore[no-untyped-def]
    directory = tmp_path_factory.mktemp("worker")
    config = write_config(world, directory, timeouts={"drain": DRAIN})
    process = start_worker(config, redis_url_module, directory / "worker.log")
    yield process
    stop_worker(process)


@pytest.fixture
def bot(make_bot, worker):  # type: ignore[no-untyped-def]
    return make_bot(timeouts={"drain": DRAIN})


def _final(replies: list[str]) -> bool:
    return any(r.startswith((":tada:", ":red_circle:", ":white_circle:")) for r in replies)


def _block_drain(world: World, node: str, app: str) -> None:
    a = world.cluster("clusterA")
    a.add_pod(node, f"{app}-0", labels={"app": app}, owner_kind="StatefulSet")
    a.add_pdb(app, "default", {"app": app}, min_available=1)


def test_worker_migration_from_command_to_outcome_in_the_thread(bot, world):
    source = [world.cluster("clusterA")]
    # the check's read of the node waits until the ack has come: the ack waits on no cluster
    with HeldClusterRequest(source, path="/api/v1/nodes/a-w-1") as check:
        delivery, _ = bot.slash("a-w-1 from clusterA to clusterB")
        assert delivery.status == 200 and "Checking" in ack_text(delivery)
        check.wait_arrived()
        assert bot.messages() == []

    message = bot.wait_message()
    request = bot.request_from_message(message)
    assert buttons(message) == [
        ("join_approve", request.id),
        ("join_reject", request.id),
        ("join_cancel", request.id),
    ]
    shown = text_of(message)
    for part in (f"<@{REQUESTER}>", "`a-w-1`", "clusterA → clusterB", "worker", request.id):
        assert part in shown
    assert "kubelet v1.31.4 on `a-w-1` vs clusterB's API server v1.32.2" in shown
    assert "8. Clean up" in shown and "Waiting for an approver" in shown
    assert request.state is State.PENDING and request.message_ts == message["ts"]
    assert request.channel and request.expires_at > request.created_at

    # the approval's re-check of the rules, held likewise: the click is acked before it
    with HeldClusterRequest(source, path="/api/v1/nodes/a-w-1") as recheck:
        clicked, click_rid = bot.approve(request.id)
        assert clicked.status == 200
        recheck.wait_arrived()
        assert bot.request(request.id).state is State.PENDING  # decided after the re-check
    replies = bot.wait_thread(request.id, _final)

    # one reply per step, posted as it started and edited to its end (steps that ended while
    # the reply waited for Slack's posting budget share it, a line each), then the outcome: at
    # most nine thread replies, each notifying the thread's followers once (edits notify nobody)
    lines = [line for r in replies[:-1] for line in r.split("\n")]
    assert [line.split("`")[1] for line in lines] == STEPS
    assert all(line.startswith(":white_check_mark: Step ") for line in lines), replies
    assert " done (" in replies[0] and len(replies) <= len(STEPS) + 1 == 9
    assert bot.sim.notifications(CHANNEL, request.message_ts) == len(replies)
    assert replies[-1] == (
        f":tada: <@{REQUESTER}> done: `a-w-1` moved from clusterA to clusterB as worker in "
        + replies[-1].split(" as worker in ")[1]
    )
    root = bot.wait_root(request.id, lambda t: "Succeeded" in t)
    assert buttons(root) == []
    assert f"Approved by <@{APPROVER}> at <!date^" in text_of(root)
    assert bot.answers(click_rid) == []  # the approver is told nothing: the message shows it

    assert world.cluster("clusterB").node("a-w-1") is not None
    assert world.cluster("clusterA").node("a-w-1") is None
    assert bot.request(request.id).state is State.SUCCEEDED

    _, status_rid = bot.slash(f"status {request.id}")
    status = bot.wait_answer(status_rid)
    assert f"*Request `{request.id}`*: succeeded" in status
    assert all(f"`{step}` succeeded" in status for step in STEPS)
    _, mine_rid = bot.slash("status")
    assert f"*Request `{request.id}`*: succeeded" in bot.wait_answer(mine_rid)


def test_double_clicks_and_two_approvers_end_in_one_approval_and_one_run(bot):
    bot.slash("a-w-2 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    clickers = [APPROVER, APPROVER, APPROVER2, GROUP_MEMBER, APPROVER2, APPROVER]
    with ThreadPoolExecutor(max_workers=len(clickers)) as pool:
        results = list(pool.map(lambda user: bot.approve(request.id, user), clickers))
    assert all(delivery.status == 200 for delivery, _ in results)

    bot.wait_thread(request.id, _final)
    history = RedisEventLog(bot.redis).history(request.id)
    approvals = [e for e in history if e.kind is EventKind.STATE and e.state == "approved"]
    assert len(approvals) == 1
    checks = [e for e in history if e.kind is EventKind.STEP_STARTED and e.step == "check"]
    assert len(checks) == 1  # one job, run once
    winner = bot.request(request.id).decided_by
    losers = [rid for (_, rid), user in zip(results, clickers, strict=True)]
    answers = [a for rid in losers for a in bot.answers(rid)]
    assert len(answers) == len(clickers) - 1
    assert all(f"already approved by <@{winner}>" in a for a in answers)
    assert bot.request(request.id).state is State.SUCCEEDED


def test_a_request_nobody_approves_expires_and_a_late_click_is_refused(make_bot, worker):
    bot = make_bot(timeouts={"approval": "1s"})
    bot.slash("a-w-5 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())

    root = bot.wait_root(request.id, lambda t: "expired, not run" in t, timeout=15)
    assert buttons(root) == []
    assert text_of(root).rstrip().endswith("expired, not run")
    replies = bot.wait_thread(request.id, lambda r: r)
    assert replies == [f":hourglass: <@{REQUESTER}> nobody approved within 1 s: expired, not run."]

    _, rid = bot.approve(request.id)
    assert "expired, not run" in bot.wait_answer(rid)
    assert bot.request(request.id).state is State.EXPIRED
    assert bot.jobs() == []


def test_cancel_before_the_agent_leaves_the_node_in_place_and_uncordoned(bot, world):
    _block_drain(world, "a-w-3", "cancel-db")
    bot.slash("a-w-3 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    bot.approve(request.id)
    bot.wait_thread(request.id, lambda r: any("Step 5/8 `drain`" in x for x in r))

    _, rid = bot.slash(f"cancel {request.id}")
    assert "Cancelling" in bot.wait_answer(rid)
    replies = bot.wait_thread(request.id, _final)
    assert replies[-1].startswith(f":white_circle: <@{REQUESTER}> Cancelled before the node agent")
    assert replies[-2].startswith(
        ":black_square_for_stop: Step 5/8 `drain` stopped"
    )  # not "running"
    assert not any("Step 6/8" in r for r in replies)
    node = world.cluster("clusterA").node("a-w-3")
    assert node is not None and not node["spec"].get("unschedulable")
    assert world.cluster("clusterB").node("a-w-3") is None
    assert bot.request(request.id).state is State.CANCELLED
    root = bot.wait_root(request.id, lambda t: "Cancelled;" in t)
    assert buttons(root) == []


def test_retry_after_a_drain_timeout_resumes_and_succeeds(bot, world):
    _block_drain(world, "a-w-4", "retry-db")
    bot.slash("a-w-4 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    bot.approve(request.id)

    replies = bot.wait_thread(request.id, _final)
    # lines, not replies: steps that end while the channel's budget holds a reply back are
    # lines of one reply (bot/step_replies.py)
    steps = [line for r in replies[:-1] for line in r.split("\n") if " Step " in line]
    assert len(steps) == 5  # four steps done, the drain failed
    assert steps[4].startswith(":x: Step 5/8 `drain` failed: ")  # its one line, edited
    failure = replies[-1]  # the outcome
    assert failure.startswith(f":red_circle: <@{REQUESTER}> Failed at step `drain`")
    assert "default/retry-db-0" in failure and "`a-w-4` is still in clusterA" in failure
    assert f"/join retry {request.id}" in failure
    bot.wait_root(request.id, lambda t: "Failed at step `drain`" in t)
    assert bot.request(request.id).state is State.FAILED

    bot.ctx.clusters.get("clusterA").policy.delete_namespaced_pod_disruption_budget(
        "retry-db", "default"
    )
    _, rid = bot.slash(f"retry {request.id}")
    assert "waits for approval again" in bot.wait_answer(rid)
    root = bot.wait_root(request.id, lambda t: "Waiting again for an approver" in t)
    assert buttons(root) == [
        ("join_approve", request.id),
        ("join_reject", request.id),
        ("join_cancel", request.id),
    ]
    retried = bot.wait_thread(request.id, lambda r: r[-1].startswith("Retry asked by"))[-1]
    # a new reply, not only the edited message: mentioning the approvers there notifies them
    assert f"Approvers: <@{APPROVER}>, <@{APPROVER2}>" in retried

    bot.approve(request.id, APPROVER2)
    replies = bot.wait_thread(request.id, lambda r: r[-1].startswith(":tada:"))
    second_run = replies[replies.index(next(r for r in replies if r.startswith("Retry"))) + 1 :]
    assert not any("`check`" in r for r in second_run)  # it succeeded before: skipped
    second_lines = [line for r in second_run for line in r.split("\n")]
    drained = [x for x in second_lines if x.startswith(":white_check_mark: Step 5/8 `drain` done")]
    assert len(drained) == 1  # run again: a line of its own, in a reply of the second run
    first_run = [line for r in replies[: len(replies) - len(second_run)] for line in r.split("\n")]
    failed = [x for x in first_run if "Step 5/8 `drain`" in x]
    assert len(failed) == 1 and failed[0].startswith(":x: Step 5/8 `drain` failed: ")  # as it was
    records = bot.ctx.records.all(request.id)
    assert all(r.outcome is Outcome.SUCCEEDED for r in records.values())
    assert records["check"].attempts == 1
    assert records["drain"].attempts == 2
    assert bot.request(request.id).state is State.SUCCEEDED
    root = bot.wait_root(request.id, lambda t: "Succeeded" in t)
    assert f"Approved by <@{APPROVER2}>" in text_of(root)
