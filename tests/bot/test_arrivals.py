"""Arrivals end to end: a kubeconfig file dropped into the hosts directory, the bot's watcher,
its announcement in slacksim, the signed clicks on it, a real worker moving the node in kubesim.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from joinops.arrivals.store import ArrivalStore, State
from joinops.requests.lifecycle import State as RequestState
from kubesim import NodeSpec
from slacksim.signing import CHANNEL_ID, block_actions_body, deliver
from tests.arrivals.support import arrivals_config, drop_host
from tests.bot.harness import (
    APPROVER,
    REQUESTER,
    SECRET,
    BotHarness,
    ack_text,
    buttons,
    text_of,
    until,
)

PROPOSE = {"to": "clusterB", "as": "worker"}


@pytest.fixture
def hosts(tmp_path):  # type: ignore[no-untyped-def]
    return tmp_path / "hosts.d"


@pytest.fixture
def arriving(make_bot, world, tmp_path, hosts) -> BotHarness:  # type: ignore[no-untyped-def]
    return make_bot(**arrivals_config(world, tmp_path, hosts, channel=CHANNEL_ID, propose=PROPOSE))


def announcements(bot: BotHarness) -> list[dict[str, Any]]:
    return [m for m in bot.messages() if "A host arrived" in text_of(m)]


def reports(bot: BotHarness, file: str) -> list[str]:
    return [text_of(m) for m in bot.messages() if file in text_of(m) and ":warning:" in text_of(m)]


def more_rounds(bot: BotHarness, count: int = 3) -> None:
    """Let the watcher look at the directory `count` more times."""
    assert bot.arrivals is not None
    done = bot.arrivals.rounds
    until(lambda: bot.arrivals is not None and bot.arrivals.rounds >= done + count, 10)


def click(bot: BotHarness, action: str, value: str, ts: str, user: str) -> str:
    """A signed click on the announcement's button; the response_url's id."""
    rid = f"arrival-click-{action}-{user}"
    url = bot.sim.response_url(rid, channel=CHANNEL_ID, user=user, message_ts=ts)
    body = block_actions_body(
        action_id=action, value=value, user_id=user, message_ts=ts, response_url=url
    )
    assert deliver(bot.events_url, body, SECRET).status == 200
    return rid


def announced(bot: BotHarness) -> dict[str, Any]:
    return bot.sim.wait_for(lambda: announcements(bot), 20)[0]


def test_a_dropped_file_is_announced_once_and_its_move_is_a_normal_approved_migration(
    arriving, world, hosts
):
    bot = arriving
    drop_host(world, hosts, "host-1")
    message = announced(bot)
    text = text_of(message)
    for fact in ("host-1", "`node-1`", "v1.32.0", "amd64", "4 cores", "15.4 GiB"):
        assert fact in text
    assert "*Nodes*\n1" in text
    assert "The rules allow moving `node-1` into *clusterB* as a worker" in text
    assert buttons(message) == [("arrival_move", "host-1"), ("arrival_dismiss", "host-1")]
    assert "Move into clusterB as worker" in str(message["blocks"])
    more_rounds(bot)
    assert len(announcements(bot)) == 1  # once, however many rounds see the file

    click(bot, "arrival_move", "host-1", message["ts"], REQUESTER)
    store = ArrivalStore(bot.redis)
    arrival = until(lambda: (a := store.get("host-1")) and a.request_id and a, 20)
    assert arrival.state is State.REQUESTED and arrival.by == REQUESTER
    request = bot.request(arrival.request_id)
    assert (request.node, request.source, request.target) == ("node-1", "host-1", "clusterB")
    assert request.requester == REQUESTER and request.state is RequestState.PENDING
    bot.sim.wait_for(
        lambda: "asked to move it" in text_of(bot.sim.messages(CHANNEL_ID)[message["ts"]]), 10
    )
    assert buttons(bot.root(request.id))  # the request's own Approve / Reject

    bot.start_worker()
    bot.approve(request.id, APPROVER)
    bot.wait_root(request.id, lambda t: "succeeded" in t.lower(), 60)
    assert world.cluster("clusterB").node("node-1") is not None
    until(lambda: store.get("host-1").state is State.MOVED, 20)  # type: ignore[union-attr]
    moved = bot.sim.wait_for(
        lambda: (
            (m := bot.sim.messages(CHANNEL_ID)[message["ts"]])
            and "Moved into *clusterB*" in text_of(m)
            and m
        ),
        10,
    )
    assert not buttons(moved)
    assert len(announcements(bot)) == 1


def test_a_host_the_rules_would_refuse_is_announced_with_why_and_no_move_button(
    arriving, world, hosts
):
    world.add_cluster(  # newer than clusterB (v1.32.2): its kubelet may not join there
        "host-3",
        version="v1.33.1",
        control_plane_endpoint="h3.test:6443",
        nodes=[NodeSpec("node-3", role="control-plane")],
    )
    drop_host(world, hosts, "host-3")
    message = announced(arriving)
    text = text_of(message)
    assert "The rules would refuse moving `node-3` into *clusterB* as a worker" in text
    refusal = next(line for line in text.splitlines() if line.startswith(":no_entry:"))
    assert "v1.33.1" in refusal and "v1.32.2" in refusal  # why: the versions compared
    assert "*Nodes*\n1" in text
    assert buttons(message) == [("arrival_dismiss", "host-3")]  # nothing to Move


def test_a_host_of_several_nodes_is_announced_with_the_join_to_type(arriving, world, hosts):
    world.add_cluster(
        "host-4",
        version="v1.32.2",
        control_plane_endpoint="h4.test:6443",
        nodes=[NodeSpec("h4-cp-1", role="control-plane"), NodeSpec("h4-w-1")],
    )
    drop_host(world, hosts, "host-4")
    message = announced(arriving)
    text = text_of(message)
    assert "*Nodes*\n2" in text and "2 nodes: joinops proposes a move only" in text
    assert "/join NODE from host-4 to TARGET" in text
    assert buttons(message) == [("arrival_dismiss", "host-4")]


def test_a_second_watcher_on_the_same_directory_does_not_announce_again(arriving, world, hosts):
    from bot.arrivals import ArrivalWatcher

    second = ArrivalWatcher(arriving.ctx).start()
    try:
        drop_host(world, hosts, "host-1")
        announced(arriving)
        more_rounds(arriving)
        until(lambda: second.rounds >= 3, 10)
        assert len(announcements(arriving)) == 1
    finally:
        second.stop()


def test_a_host_that_does_not_answer_yet_is_retried_with_backoff_then_announced(
    arriving, world, hosts
):
    world.cluster("host-1").set_reachable(False)
    drop_host(world, hosts, "host-1")
    store = ArrivalStore(arriving.redis)
    next_probes: dict[int, float] = {}  # attempts -> when the next probe was due

    def probed(count: int) -> Any:
        arrival = store.get("host-1")
        if arrival is not None and arrival.attempts:
            next_probes.setdefault(arrival.attempts, arrival.next_probe_at)
        return arrival if arrival is not None and arrival.attempts >= count else None

    waiting = until(lambda: probed(4), 20)
    assert waiting.state is State.WAITING and waiting.next_probe_at > waiting.first_seen
    # poll 0.2 s: the waits double, 0.2, 0.4, 0.8 s (each probe comes at the round after)
    gaps = [next_probes[n + 1] - next_probes[n] for n in (1, 2, 3)]
    assert gaps[0] >= 0.4 and gaps[1] >= 0.8 and gaps[2] >= 1.6, gaps
    assert gaps[0] < gaps[1] < gaps[2], gaps
    assert "did not answer" in waiting.last_error
    assert not announcements(arriving)
    world.cluster("host-1").set_reachable(True)
    announced(arriving)
    assert store.get("host-1").state is State.ANNOUNCED  # type: ignore[union-attr]


def test_an_approver_who_clicked_move_may_not_approve_that_request(arriving, world, hosts):
    drop_host(world, hosts, "host-1")
    message = announced(arriving)
    click(arriving, "arrival_move", "host-1", message["ts"], APPROVER)
    store = ArrivalStore(arriving.redis)
    arrival = until(lambda: (a := store.get("host-1")) and a.request_id and a, 20)
    request = arriving.request(arrival.request_id)
    assert request.requester == APPROVER  # asked by whoever clicked
    _, rid = arriving.approve(request.id, APPROVER)
    assert "someone else must approve it" in arriving.wait_answer(rid)
    assert arriving.request(request.id).state is RequestState.PENDING


def test_dismiss_closes_the_announcement(arriving, world, hosts):
    drop_host(world, hosts, "host-1")
    message = announced(arriving)
    click(arriving, "arrival_dismiss", "host-1", message["ts"], REQUESTER)
    store = ArrivalStore(arriving.redis)
    until(lambda: store.get("host-1").state is State.DISMISSED, 10)  # type: ignore[union-attr]
    closed = arriving.sim.wait_for(
        lambda: (m := arriving.sim.messages(CHANNEL_ID)[message["ts"]]) and not buttons(m) and m,
        10,
    )
    assert f"Dismissed by <@{REQUESTER}>" in text_of(closed)
    rid = click(arriving, "arrival_move", "host-1", message["ts"], APPROVER)
    assert "host-1 is already dismissed" in arriving.wait_answer(rid)


def test_a_dismiss_clicked_before_the_announcement_is_recorded_still_closes_it(
    arriving, world, hosts
):
    # Slack holds the announcement's post: the host is announced, its message not yet recorded
    post = arriving.sim.holds.add(
        "chat.postMessage", lambda params: "host-1" in str(params.get("text", ""))
    )
    drop_host(world, hosts, "host-1")
    post.wait_arrived()
    store = ArrivalStore(arriving.redis)
    until(lambda: store.get("host-1") and store.get("host-1").state is State.ANNOUNCED, 10)  # type: ignore[union-attr]
    click(arriving, "arrival_dismiss", "host-1", "0000000000.000000", REQUESTER)
    until(lambda: store.get("host-1").state is State.DISMISSED, 10)  # type: ignore[union-attr]
    post.release()
    closed = arriving.sim.wait_for(
        lambda: [m for m in announcements(arriving) if not buttons(m)], 10
    )[0]
    assert f"Dismissed by <@{REQUESTER}>" in text_of(closed)


def test_an_invalid_file_is_reported_once_to_the_channel_and_the_log(
    arriving, world, hosts, caplog
):
    hosts.mkdir()
    caplog.set_level(logging.WARNING, logger="bot.arrivals")
    (hosts / "host-9.yaml").write_text("apiVersion: v1\nusers: [{name: x, user: {token: s3cr3t}}\n")
    report = arriving.sim.wait_for(lambda: reports(arriving, "host-9.yaml"), 20)[0]
    assert "not valid YAML" in report and "s3cr3t" not in report
    more_rounds(arriving)
    assert len(reports(arriving, "host-9.yaml")) == 1
    logged = [r.getMessage() for r in caplog.records if "host-9.yaml" in r.getMessage()]
    assert len(logged) == 1 and "s3cr3t" not in logged[0]
    drop_host(world, hosts, "host-1", file="host-9.yaml")  # fixed: a valid file at last
    assert "host-9" in text_of(announced(arriving))


BROKEN_CREDENTIALS = """apiVersion: v1
kind: Config
clusters:
- name: h
  cluster: {server: "https://127.0.0.1:9", certificate-authority-data: "s3cr3t!"}
users: [{name: u, user: {token: s3cr3t-t0ken}}]
contexts: [{name: h, context: {cluster: h, user: u}}]
current-context: h
"""


def test_a_kubeconfig_its_client_cannot_use_is_reported_once_without_its_secrets(
    arriving, world, hosts, caplog
):
    """Well formed, so it names a cluster, but its certificate data does not decode."""
    hosts.mkdir()
    caplog.set_level(logging.INFO, logger="bot.arrivals")
    (hosts / "host-7.yaml").write_text(BROKEN_CREDENTIALS)
    report = arriving.sim.wait_for(lambda: reports(arriving, "host-7.yaml"), 20)[0]
    assert "not a usable kubeconfig" in report
    store = ArrivalStore(arriving.redis)
    until(lambda: (a := store.get("host-7")) and a.attempts >= 2, 20)  # probed again, later
    more_rounds(arriving)
    assert len(reports(arriving, "host-7.yaml")) == 1
    warned = [
        r for r in caplog.records if r.levelno >= logging.WARNING and "host-7" in r.getMessage()
    ]
    assert len(warned) == 1
    everything = "\n".join(r.getMessage() for r in caplog.records) + "\n".join(
        text_of(m) for m in arriving.messages()
    )
    assert "s3cr3t" not in everything
    assert not announcements(arriving)


def test_two_files_naming_one_cluster_are_refused_by_name_until_one_goes(arriving, world, hosts):
    hosts.mkdir()
    for name in ("host-1.yaml", "host-1.conf"):  # written aside, then dropped together
        world.write_kubeconfig(hosts / f".{name}.tmp", only=["host-1"])
    for name in ("host-1.yaml", "host-1.conf"):
        (hosts / f".{name}.tmp").rename(hosts / name)
    second = hosts / "host-1.conf"
    report = arriving.sim.wait_for(lambda: reports(arriving, "host-1.conf"), 20)[0]
    assert "host-1.yaml" in report and "until only one is left" in report
    more_rounds(arriving)
    assert len(reports(arriving, "host-1.conf")) == 1  # once
    delivery, rid = arriving.slash("node-1 from host-1 to clusterB")
    answer = ack_text(delivery) + "\n".join(arriving.answers(rid))
    if "host-1.conf" not in answer:
        answer = arriving.wait_answer(rid)
    assert "host-1.conf" in answer and "host-1.yaml" in answer
    assert not announcements(arriving)
    second.unlink()
    assert "host-1" in text_of(announced(arriving))
