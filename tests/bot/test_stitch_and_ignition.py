"""End to end: Ignition files and batches from Slack, with a real `joinops worker`.

`/join ignition …` → approval → the worker makes the file → the bot sends it to the requester by
direct message, and nothing secret reaches any channel. `/join n1 n2 n3 to DST` and
`/join all from SRC to DST` → one table, one approval → the table updated in place, one thread
line per node and a summary. One world and one worker serve the module, as in test_flows.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from bot import ignition_expiry as expiry
from joinops.ignition import request as ir
from joinops.ignition.config import join_configuration_of
from joinops.ignition.validate import problems
from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from joinops.rules import batch as batches
from kubesim import NodeSpec, World
from tests.bot.harness import (
    APPROVER,
    REQUESTER,
    HeldClusterRequest,
    ack_text,
    buttons,
    text_of,
    until,
)
from tests.support.clusters import add_single_node_hosts, write_config
from tests.support.engine import start_worker, stop_worker

MAX_PARALLEL = 2
TIMEOUTS = {"drain": "3s"}  # long enough to cancel a blocked drain, short enough to wait for it


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    with World(pod_grace_seconds=0.05, join_seconds=0.1) as w:
        w.add_cluster(
            "clusterB",
            version="v1.32.2",
            control_plane_endpoint="cp.b.test:6443",
            nodes=[NodeSpec("b-cp-1", role="control-plane"), NodeSpec("b-w-1")],
        )
        add_single_node_hosts(w, 3)  # one host each, booted into a single-node cluster of its own
        w.add_cluster(
            "small",
            version="v1.31.4",
            control_plane_endpoint="cp.small.test:6443",
            nodes=[NodeSpec("s-cp-1", role="control-plane"), NodeSpec("s-w-1"), NodeSpec("s-w-2")],
        )
        w.add_cluster(
            "pair",
            version="v1.32.0",
            control_plane_endpoint="cp.pair.test:6443",
            nodes=[NodeSpec("p-cp-1", role="control-plane"), NodeSpec("p-w-1"), NodeSpec("p-w-2")],
        )
        for side in ("left", "right"):  # both have a node called `twin`
            w.add_cluster(
                side,
                version="v1.32.0",
                nodes=[NodeSpec(f"{side}-cp-1", role="control-plane"), NodeSpec("twin")],
            )
        yield w


@pytest.fixture
def redis_client(shared_redis: redis.Redis) -> redis.Redis:
    return shared_redis


@pytest.fixture(scope="module")
def worker_log(world, shared_redis, redis_url_module, tmp_path_factory):  # type: ignore[no-untyped-def]
    directory = tmp_path_factory.mktemp("worker")
    config = write_config(world, directory, max_parallel=MAX_PARALLEL, timeouts=TIMEOUTS)
    log = directory / "worker.log"
    processes = [start_worker(config, redis_url_module, log.with_suffix(f".{i}")) for i in (1, 2)]
    yield directory
    for process in processes:
        stop_worker(process)


@pytest.fixture
def bot(make_bot, worker_log):  # type: ignore[no-untyped-def]
    return make_bot(max_parallel=MAX_PARALLEL, timeouts=TIMEOUTS)


def _ended(replies: list[str]) -> bool:
    return any(r.startswith((":tada:", ":red_circle:", ":white_circle:")) for r in replies)


def _table(message: dict[str, Any]) -> dict[str, list[str]]:
    """The batch table of a request message: node -> its cells."""
    rows: dict[str, list[str]] = {}
    for line in text_of(message).splitlines():
        cells = [c for c in line.strip("`").split("  ") if c.strip()]
        if len(cells) >= 6 and cells[0] != "NODE":
            rows[cells[0].strip()] = [c.strip() for c in cells]
    return rows


# ---- Ignition ----------------------------------------------------------------------------------


def _everything_said_outside_the_dm(bot: Any, deliveries: list[Any], logs: Path) -> str:
    """Every Web API call (messages, updates, ephemerals, the upload's completion), every
    response_url body, every HTTP ack, every Redis key's value and the workers' logs."""
    parts = [json.dumps([c.params, c.response], default=str) for c in bot.sim.calls]
    parts += [json.dumps(bodies) for bodies in bot.sim.response_urls.values()]
    parts += [d.body.decode(errors="replace") for d in deliveries]
    for key in bot.redis.scan_iter(count=1000):
        kind = bot.redis.type(key).decode()
        if kind == "string":
            parts.append(repr(bot.redis.get(key)))
        elif kind == "hash":
            parts.append(repr(bot.redis.hgetall(key)))
        elif kind == "stream":
            parts.append(repr(bot.redis.xrange(key)))
        elif kind == "list":
            parts.append(repr(bot.redis.lrange(key, 0, -1)))
        elif kind == "set":
            parts.append(repr(bot.redis.smembers(key)))
        elif kind == "zset":
            parts.append(repr(bot.redis.zrange(key, 0, -1)))
    parts += [p.read_text(errors="replace") for p in logs.glob("worker.*")]
    return "\n".join(parts)


def test_a_control_plane_ignition_file_goes_to_the_requester_by_dm_and_nothing_secret_leaks(
    bot, worker_log
):
    asked, _ = bot.slash("ignition clusterB as control-plane")
    message = bot.wait_message(timeout=20)
    request = bot.request_from_message(message)
    shown = text_of(message)
    assert shown.startswith("Ignition file: a new control plane for clusterB")
    for part in (f"<@{REQUESTER}>", "clusterB", "control plane", request.id, "*by direct message*"):
        assert part in shown
    assert "*Valid for* 2 h from when it is made" in shown
    assert "no longer than 2 h after the control-plane certificates are uploaded" in shown
    assert request.kind == ir.KIND and request.role is Role.CONTROL_PLANE
    assert buttons(message) == [
        ("join_approve", request.id),
        ("join_reject", request.id),
        ("join_cancel", request.id),
    ]

    clicked, _ = bot.approve(request.id)
    replies = bot.wait_thread(request.id, _ended, timeout=30)
    assert replies[0].startswith(f"Approved by <@{APPROVER}> at <!date^")
    assert replies[1].startswith(":white_check_mark: Step `ignition` done")  # edited in place
    assert "bootstrap token Secret kube-system/bootstrap-token-" in replies[2]
    assert "control-plane certificates uploaded on b-cp-1" in replies[3]
    assert len(replies) == 5  # and the outcome: the step's own outcome is not repeated

    upload = bot.sim.wait_for(lambda: [u for u in bot.sim.uploads if u.completed], 10)[0]
    assert upload.filename == "clusterB-control-plane.ign"
    assert upload.channel_id and upload.channel_id.startswith("D")  # a direct message…
    opened = bot.sim.calls_to("conversations.open")
    assert [c.params["users"] for c in opened] == [REQUESTER]  # …with the requester alone
    assert opened[0].response["channel"]["id"] == upload.channel_id
    dm = list(bot.sim.messages(upload.channel_id).values())
    assert len(dm) == 1 and dm[0]["files"][0]["name"] == upload.filename
    assert "valid until" in dm[0]["text"].lower()
    assert not any(m.get("files") for m in bot.messages())  # never shared in the channel

    assert upload.content is not None
    config = json.loads(upload.content)
    assert config["ignition"]["version"] == "3.4.0" and problems(config) == []
    join = join_configuration_of(config)
    token = join["discovery"]["bootstrapToken"]["token"]
    key = join["controlPlane"]["certificateKey"]
    token_id, secret = token.split(".")

    done = bot.request(request.id)
    digest = hashlib.sha256(upload.content).hexdigest()
    assert done.state is State.SUCCEEDED and done.extra[ir.SHA256] == digest
    final = replies[-1]
    assert final.startswith(f":tada: <@{REQUESTER}> your Ignition file `{upload.filename}`")
    assert f"approved by <@{APPROVER}>" in final and f"SHA-256 `{digest}`" in final
    assert "Valid until <!date^" in final and f"kubeadm token delete {token_id}" in final
    root = bot.wait_root(request.id, lambda t: "Sent to" in t)
    assert f"Sent to <@{REQUESTER}> by direct message; valid until <!date^" in text_of(root)
    assert ir.fetch_file(bot.redis, request.id) is None  # forgotten once delivered

    everything = _everything_said_outside_the_dm(bot, [asked, clicked], worker_log)
    assert token not in everything and secret not in everything
    assert key not in everything


def test_a_worker_ignition_file_and_the_thread_record_who_asked_and_approved(bot):
    bot.slash("ignition clusterB")
    request = bot.request_from_message(bot.wait_message(timeout=20))
    assert "no longer than 2 h after" not in text_of(bot.root(request.id))
    bot.approve(request.id)
    replies = bot.wait_thread(request.id, _ended, timeout=30)
    assert replies[-1].startswith(f":tada: <@{REQUESTER}> your Ignition file `clusterB-worker.ign`")
    upload = next(u for u in bot.sim.uploads if u.filename == "clusterB-worker.ign")
    assert "controlPlane" not in join_configuration_of(json.loads(upload.content or b"{}"))


def test_an_ignition_job_that_fails_says_why_in_the_thread_and_sends_nothing(bot, world):
    # `pair`, not clusterB: a control-plane file into clusterB made earlier in this module holds
    # its certificate key, and this one must fail at the upload pod, not before it
    cluster = world.cluster("pair")
    cluster.faults.add(status=403, method="POST", path_contains="/pods", times=1)
    bot.slash("ignition pair as cp")
    request = bot.request_from_message(bot.wait_message(timeout=20))
    bot.approve(request.id)
    replies = bot.wait_thread(request.id, _ended, timeout=30)
    cluster.faults.clear()  # the module's world is shared: nothing armed is left behind
    assert replies[-1].startswith(f":red_circle: <@{REQUESTER}> No Ignition file: ")
    assert "may not create pods" in replies[-1]  # the upload pod, refused
    assert f"`/join retry {request.id}` asks for approval again" in replies[-1]
    assert bot.request(request.id).state is State.FAILED
    bot.wait_root(request.id, lambda t: "No Ignition file; the thread says why" in t)
    assert bot.sim.uploads == [] and bot.sim.calls_to("conversations.open") == []


def test_a_file_slack_will_not_take_is_discarded_and_the_thread_says_how_to_revoke_it(bot):
    bot.sim.faults.add("conversations.open", error="user_not_found", times=1)
    bot.slash("ignition clusterB")
    request = bot.request_from_message(bot.wait_message(timeout=20))
    bot.approve(request.id)
    replies = bot.wait_thread(request.id, _ended, timeout=30)
    done = bot.request(request.id)
    assert replies[-1].startswith(
        f":red_circle: <@{REQUESTER}> the Ignition file was made but not delivered: "
        "Slack refused the direct message or the upload (`user_not_found`)."
    )
    assert f"`kubeadm token delete {done.extra[ir.TOKEN_ID]}`" in replies[-1]
    assert "then ask again with `/join ignition clusterB`" in replies[-1]
    assert ir.fetch_file(bot.redis, request.id) is None and bot.sim.uploads == []
    bot.wait_root(request.id, lambda t: "Made but not delivered" in t)


def test_an_ignition_file_that_cannot_be_made_is_refused_and_nothing_is_stored(bot):
    stored = len(bot.ctx.store.recent(1000))
    bot.slash("ignition left as control-plane")  # no controlPlaneEndpoint
    message = bot.wait_message(timeout=20)
    shown = text_of(message)
    assert shown.startswith("Refused: Ignition file for a new control plane of left")
    assert "left has no controlPlaneEndpoint" in shown and buttons(message) == []
    assert len(bot.ctx.store.recent(1000)) == stored


def _deleted_said(bot: Any, dm: str, request_id: str) -> str | None:
    """The DM's word that the request's file was deleted (earlier tests' files go too)."""
    said = [text_of(m) for m in bot.sim.messages(dm).values()]
    return next((t for t in said if ":wastebasket:" in t and request_id in t), None)


def test_the_file_is_deleted_from_slack_when_its_token_expires_even_after_a_restart(
    make_bot, worker_log
):
    """The token lives 2 h (a Slack request's; at least 5 min): the bots' clock is moved past
    its expiry rather than waiting for it. The bot that sent the file is gone by then: the
    deletion was recorded in Redis, and the next bot does it."""
    ahead = [0.0]

    def clock() -> float:
        return time.time() + ahead[0]

    first = make_bot(clock=clock, max_parallel=MAX_PARALLEL, timeouts=TIMEOUTS)
    first.redis.delete(expiry.PENDING)  # earlier tests' files: they would go too, the clock moved
    first.slash("ignition clusterB")
    request = first.request_from_message(first.wait_message(timeout=20))
    first.approve(request.id)
    first.wait_thread(request.id, _ended, timeout=30)
    upload = first.sim.wait_for(lambda: [u for u in first.sim.uploads if u.completed], 10)[0]
    assert upload.channel_id is not None
    [shared] = first.sim.messages(upload.channel_id).values()
    assert "I delete it from Slack when its token expires." in shared["text"]
    valid_until = float(first.request(request.id).extra[ir.VALID_UNTIL])
    assert valid_until > time.time() + 3600
    assert first.relay.idle(10) and first.sim.calls_to("files.delete") == []  # not before
    first.relay.stop()  # this bot is gone before the token expires

    ahead[0] = valid_until + 1 - time.time()
    make_bot(clock=clock, max_parallel=MAX_PARALLEL, timeouts=TIMEOUTS)
    said = first.sim.wait_for(lambda: _deleted_said(first, upload.channel_id, request.id), 10)
    [deleted] = [u for u in first.sim.uploads if u.file_id == upload.file_id]
    assert deleted.deleted and deleted.content is None  # gone from Slack…
    calls = first.sim.calls_to("files.delete")
    assert [c.params["file"] for c in calls].count(upload.file_id) == 1
    assert first.sim.messages(upload.channel_id)[shared["ts"]]["files"] == [
        {"id": upload.file_id, "mode": "tombstone"}
    ]
    assert said.startswith(  # …and the DM says so
        f":wastebasket: `clusterB-worker.ign` (request `{request.id}`) was deleted from Slack "
        "at <!date^"
    )
    assert "UTC> when its token expired" in said
    assert float(first.request(request.id).extra[expiry.DELETED_AT]) >= valid_until
    assert first.redis.zscore(expiry.PENDING, request.id) is None  # never again


def test_a_deletion_slack_fails_is_tried_again_and_a_file_deleted_by_hand_is_done(
    make_bot, worker_log
):
    ahead = [0.0]
    bot = make_bot(
        clock=lambda: time.time() + ahead[0], max_parallel=MAX_PARALLEL, timeouts=TIMEOUTS
    )
    bot.redis.delete(expiry.PENDING)  # earlier tests' files: they would go too, the clock moved
    made = []
    for asked in range(2):
        bot.slash("ignition clusterB")
        posted = bot.sim.wait_for(lambda: bot.messages()[asked:], 20)[-1]  # noqa: B023
        request = bot.request_from_message(posted)
        bot.approve(request.id)
        bot.wait_thread(request.id, _ended, timeout=30)
        made.append(bot.request(request.id))
    ids = [m.id for m in made]

    def deleted() -> list[bool]:
        return [bool(bot.request(i).extra.get(expiry.DELETED_AT)) for i in ids]

    bot.ctx.client.files_delete(file=made[1].extra[expiry.FILE_ID])  # by hand, before expiry
    bot.sim.faults.add("files.delete", error="internal_error", times=1)
    ahead[0] = max(float(m.extra[ir.VALID_UNTIL]) for m in made) + 1 - time.time()
    bot.sim.wait_for(lambda: bot.sim.calls_to("files.delete")[2:], 10)  # both tried, one failed
    assert bot.relay.idle(10) and deleted().count(True) == 1

    ahead[0] += expiry.RETRY + 1  # a minute later: the failed one again
    dms = {u.channel_id for u in bot.sim.uploads}

    def said() -> list[str]:
        return [text_of(m) for dm in dms for m in bot.sim.messages(dm or "").values()]

    # the DM is a deletion's last step (after its record and the pending set): wait for both
    until(lambda: sum(":wastebasket:" in s for s in said()) >= 2, 30)
    assert all(deleted())
    assert all(u.deleted for u in bot.sim.uploads)
    assert [bot.redis.zscore(expiry.PENDING, i) for i in ids] == [None, None]
    assert bot.relay.idle(10)
    assert sum(":wastebasket:" in s for s in said()) == 2  # each DM says so, once


# ---- batches -----------------------------------------------------------------------------------


def test_three_single_node_clusters_are_stitched_into_one_with_one_table_and_one_approval(
    bot, world
):
    # host-1 answers the planning's read of node-1 only once the ack has come
    with HeldClusterRequest([world.cluster("host-1")], path="/api/v1/nodes/node-1") as read:
        delivery, _ = bot.slash("node-1 node-2 node-3 to clusterB")
        assert delivery.status == 200 and "Looking for 3 nodes" in ack_text(delivery)
        read.wait_arrived()
        assert bot.messages() == []
    message = bot.wait_message(timeout=20)
    batch = bot.request_from_message(message)
    shown = text_of(message)
    assert shown.startswith("Move 3 nodes to clusterB")
    table = _table(message)
    assert set(table) == {"node-1", "node-2", "node-3"}
    assert table["node-2"][:4] == ["node-2", "host-2", "v1.32.1 → v1.32.2", "worker"]
    assert all(row[-1] == "waits for approval" for row in table.values())
    assert table["node-1"][5] == "warn: destroys-source, note: role-change"
    assert "This destroys host-3" in shown
    approve = next(
        e
        for b in message["blocks"]
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] == "join_approve"
    )
    assert "host-1, host-2, host-3" in approve["confirm"]["text"]["text"]  # asks first
    kids = [bot.request(i) for i in batch.extra["children"].split(",")]
    assert [k.state for k in kids] == [State.PENDING] * 3

    bot.approve(batch.id)
    replies = bot.wait_thread(batch.id, _ended, timeout=40)
    assert replies[0].startswith(f"Approved by <@{APPROVER}>")
    assert "your 3 nodes are queued" in replies[0]
    outcomes = replies[1:-1]
    assert len(outcomes) == 3  # one line per node, no step of any node: no flood
    assert all(
        r.startswith(":white_check_mark: `node-") and ": succeeded." in r for r in outcomes
    ), [bot.request(k.id).outcome for k in kids]
    assert replies[-1].startswith(f":tada: <@{REQUESTER}> Batch finished in ")
    assert "3 of 3 moved, 0 failed, 0 not run." in replies[-1]

    root = bot.wait_root(batch.id, lambda t: "3 of 3 moved" in t)
    assert [row[-1] for row in _table(root).values()] == ["moved"] * 3
    assert root["ts"] == batch.message_ts  # the same message, updated in place
    updates = [c for c in bot.sim.calls_to("chat.update") if c.params["ts"] == batch.message_ts]
    assert 2 <= len(updates) <= 20
    for i in (1, 2, 3):
        conditions = world.cluster("clusterB").node(f"node-{i}")["status"]["conditions"]
        assert any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
        assert not world.cluster(f"host-{i}").reachable


def test_all_from_a_cluster_moves_its_workers_then_its_control_plane(bot, world):
    bot.slash("all from small to clusterB")
    message = bot.wait_message(timeout=20)
    batch = bot.request_from_message(message)
    table = _table(message)
    # clusterB has one etcd member: a second would make it even, so it joins as a worker
    assert table["s-cp-1"][3] == "worker"
    assert table["s-cp-1"][4] == "s-w-1, s-w-2"  # waits for the workers (it ends `small`)
    assert table["s-w-1"][4] == "-"

    bot.approve(batch.id)
    replies = bot.wait_thread(batch.id, _ended, timeout=40)
    outcomes = [r for r in replies if r.startswith(":white_check_mark: `")]
    assert [o.split("`")[1] for o in outcomes][-1] == "s-cp-1"  # the control plane last
    assert "3 of 3 moved" in replies[-1]
    labels = world.cluster("clusterB").node("s-cp-1")["metadata"]["labels"]
    assert "node-role.kubernetes.io/control-plane" not in labels
    assert "node-role.kubernetes.io/worker" in labels
    assert not world.cluster("small").reachable


def test_one_failing_node_is_reported_while_the_other_moves(bot, world):
    pair = world.cluster("pair")
    pair.add_pod("p-w-2", "db-0", labels={"app": "db"}, owner_kind="StatefulSet")
    pair.add_pdb("db", "default", {"app": "db"}, min_available=1)
    bot.slash("p-w-1 p-w-2 to clusterB")
    batch = bot.request_from_message(bot.wait_message(timeout=20))
    bot.approve(batch.id)
    replies = bot.wait_thread(batch.id, _ended, timeout=40)
    assert any(r.startswith(":white_check_mark: `p-w-1`: succeeded.") for r in replies)
    failed = next(r for r in replies if r.startswith(":x: `p-w-2`: failed."))
    assert "default/db-0" in failed
    assert replies[-1].startswith(f":red_circle: <@{REQUESTER}> Batch finished in ")
    assert "1 of 2 moved, 1 failed, 0 not run." in replies[-1]
    assert "To ask again for them: `/join p-w-2 to clusterB`." in replies[-1]
    root = bot.wait_root(batch.id, lambda t: "1 of 2 moved" in t)
    cells = {node: row[-1] for node, row in _table(root).items()}
    assert cells == {"p-w-1": "moved", "p-w-2": "failed at drain"}
    assert world.cluster("pair").node("p-w-2") is not None  # still in its source


def test_cancelling_a_running_batch_stops_the_nodes_not_past_their_agent(bot, world):
    # p-w-2's drain is still blocked (previous test); p-cp-1 waits for it.
    bot.slash("p-w-2 p-cp-1 from pair to clusterB")
    batch = bot.request_from_message(bot.wait_message(timeout=20))
    kids = {k.node: k for k in (bot.request(i) for i in batch.extra["children"].split(","))}
    bot.approve(batch.id)
    until(lambda: "drain" in bot.request(kids["p-w-2"].id).extra.get("status_cell", ""), 10)

    _, rid = bot.slash(f"cancel {batch.id}")
    assert f"Cancelling `{batch.id}`: 2 nodes not yet past the point" in bot.wait_answer(rid)
    replies = bot.wait_thread(batch.id, _ended, timeout=30)
    assert replies[-1].startswith(f":white_circle: <@{REQUESTER}> cancelled by <@{REQUESTER}>.")
    assert "0 of 2 moved, 0 failed, 2 not run." in replies[-1]
    assert {bot.request(k.id).state for k in kids.values()} == {State.CANCELLED}
    root = bot.wait_root(batch.id, lambda t: "Cancelled by" in t and "2 not run" in t)
    assert {row[-1] for row in _table(root).values()} == {"not run"}
    node = world.cluster("pair").node("p-w-2")
    assert node is not None and not node["spec"].get("unschedulable")  # put back as it was


def test_a_batch_nobody_approves_expires_with_its_nodes(make_bot, worker_log):
    bot = make_bot(max_parallel=MAX_PARALLEL, timeouts={**TIMEOUTS, "approval": "1s"})
    bot.slash("twin right-cp-1 from right to clusterB")
    batch = bot.request_from_message(bot.wait_message(timeout=20))
    root = bot.wait_root(batch.id, lambda t: "expired, not run" in t, timeout=15)
    assert buttons(root) == []
    kids = batch.extra["children"].split(",")
    until(lambda: {bot.request(i).state for i in kids} == {State.EXPIRED}, 10)
    assert bot.wait_thread(batch.id, lambda r: r) == [
        f":hourglass: <@{REQUESTER}> nobody approved within 1 s: expired, not run."
    ]


def test_a_name_in_two_clusters_is_refused_naming_both(bot):
    stored = len(bot.ctx.store.recent(1000))
    bot.slash("twin b-w-9 to clusterB")
    message = bot.wait_message(timeout=20)
    shown = text_of(message)
    assert shown.startswith("Refused: move 2 nodes to clusterB")
    assert "`twin` is a node of left and right" in shown
    assert buttons(message) == []
    assert len(bot.ctx.store.recent(1000)) == stored  # nothing that could be approved

    bot.slash("twin to clusterB")  # one node without `from`: the same refusal
    refused = bot.sim.wait_for(lambda: len(bot.messages()) == 2 and bot.messages()[-1], 20)
    assert "`twin` is a node of left and right" in text_of(refused)


def test_a_batch_rejected_or_cancelled_before_approval_takes_its_nodes_with_it(bot):
    bot.slash("twin left-cp-1 from left to clusterB")
    first = bot.request_from_message(bot.wait_message(timeout=20))
    bot.click("join_reject", first.id, APPROVER)
    bot.wait_root(first.id, lambda t: "Rejected" in t)
    kids = [bot.request(i) for i in first.extra["children"].split(",")]
    assert {k.state for k in kids} == {State.REJECTED}

    bot.slash("twin right-cp-1 from right to clusterB")
    second = bot.request_from_message(
        bot.sim.wait_for(lambda: len(bot.messages()) == 2 and bot.messages()[-1], 20)
    )
    assert second.id != first.id
    _, rid = bot.slash(f"cancel {second.id}")
    assert "before it started: nothing was moved" in bot.wait_answer(rid)
    assert {bot.request(i).state for i in second.extra["children"].split(",")} == {State.CANCELLED}
    replies = bot.wait_thread(second.id, lambda r: r and r[-1].startswith(":white_circle:"))
    assert replies == [
        f":white_circle: <@{REQUESTER}> cancelled before it started: nothing was moved."
    ]
    root = bot.wait_root(second.id, lambda t: "Cancelled before it started" in t)
    assert buttons(root) == [] and f"Cancelled by <@{REQUESTER}>" in text_of(root)
    _, rid = bot.slash("list")
    assert "No active requests." in bot.wait_answer(rid)


def test_retrying_a_failed_batch_answers_with_the_command_for_the_nodes_not_moved(bot):
    ctx = bot.ctx
    plan = batches.plan_nodes(["twin", "left-cp-1"], "left", "clusterB", Role.WORKER, ctx.clusters)
    batch = batches.create_batch(
        ctx.store, plan, requester=REQUESTER, decided_by=APPROVER, state=State.APPROVED
    )
    ids = batch.extra["children"].split(",")
    for child_id, end in zip(ids, (State.SUCCEEDED, State.FAILED), strict=True):
        ctx.store.transition(child_id, State.RUNNING)
        ctx.store.transition(child_id, end)
    ctx.store.transition(batch.id, State.RUNNING)
    ctx.store.transition(batch.id, State.FAILED, outcome="Batch finished in 3 s: …")
    _, rid = bot.slash(f"retry {batch.id}")
    moved_first = bot.request(ids[0]).node
    missing = bot.request(ids[1]).node
    answer = bot.wait_answer(rid)
    assert "not retried as a whole" in answer and f"`/join {missing} to clusterB`" in answer
    assert moved_first not in answer.split("`/join")[1]
    _, rid = bot.slash(f"status {batch.id}")
    status = bot.wait_answer(rid)
    assert (
        f"`{missing}` from left: failed" in status and f"`{moved_first}` from left: moved" in status
    )
    assert bot.request(batch.id).state is State.FAILED
