"""Several bot replicas, one relay: every event's reply is posted once, in its thread's order,
whichever replica relays it and when the relaying replica stops.

Each replica's post-ack process runs the relay only while it holds the lease
(bot/post_ack_process.py: `leading_parts` under a `Leader`), always as the same consumer of the
relay's group: a replica that takes over first delivers what the one before left unacknowledged,
then what comes next. Here two replicas' post-ack sides run over one Redis and one slacksim; the
engine's events for three migrations are emitted as its workers emit them, and the replica that
relays is stopped halfway (as a rolling restart stops it).
"""

from __future__ import annotations

import re

from bot.lease import Leader, Lease
from bot.post_ack_process import LEADER_KEY, leading_parts
from joinops.requests.events import Event, EventKind, RedisEventLog
from joinops.requests.lifecycle import State
from joinops.requests.plan import STEP_IDS
from joinops.requests.store import Request
from kubesim import NodeSpec, World
from slacksim.signing import CHANNEL_ID
from tests.arrivals.support import arrivals_config, drop_host
from tests.bot.harness import APPROVER, BotHarness, text_of, until

NODES = ("a-w-1", "a-w-2", "a-w-3")
PROPOSE = {"to": "clusterB", "as": "worker"}


def _running(bot: BotHarness, node: str) -> Request:
    """A request asked and approved in Slack whose job (played by the test) has started."""
    bot.slash(f"{node} from clusterA to clusterB")
    request = bot.request_from_message(
        bot.sim.wait_for(lambda: [m for m in bot.messages() if node in str(m)])[-1]
    )
    bot.approve(request.id, APPROVER)
    bot.wait_root(request.id, lambda t: f"Approved by <@{APPROVER}>" in t)
    assert bot.ctx.store.transition(request.id, State.RUNNING)[0]
    return request


def _third_worker(bot: BotHarness) -> None:
    bot.world.cluster("clusterA").add_node(NodeSpec(NODES[2]))


def _events(request: Request, steps: tuple[str, ...]) -> list[Event]:
    found = []
    for step in steps:
        found.append(Event(request.id, EventKind.STEP_STARTED, f"{step} begins", step=step))
        found.append(Event(request.id, EventKind.STEP_SUCCEEDED, f"{step} ok", step=step))
    return found


def _done(replies: list[str]) -> bool:
    return any(r.startswith(":tada:") for r in replies)


def test_two_replicas_one_relay_every_reply_once_in_order_across_a_handover(bot):
    _third_worker(bot)
    bot.relay.stop()  # the harness's own relay: the replicas' take its place
    requests = [_running(bot, node) for node in NODES]
    replicas = [
        Leader(Lease(bot.redis, LEADER_KEY, name), leading_parts(bot.ctx), name).start()
        for name in ("replica-a", "replica-b")
    ]
    try:
        first = until(lambda: next((r for r in replicas if r.leading), None), 30)
        other = next(r for r in replicas if r is not first)
        assert not other.leading  # one relay, whatever the replica count
        log = RedisEventLog(bot.redis)
        half = len(STEP_IDS) // 2
        for request in requests:
            for event in _events(request, STEP_IDS[:half]):
                log.emit(event)
        first.stop()  # a rolling restart stops the replica that relays
        assert other.wait_leading(True, 30)
        for request in requests:
            for event in _events(request, STEP_IDS[half:]):
                log.emit(event)
            bot.ctx.store.transition(request.id, State.SUCCEEDED, outcome="Moved.")
            log.emit(Event(request.id, EventKind.STATE, "Moved.", state="succeeded"))
        threads = {r.id: bot.wait_thread(r.id, _done, timeout=120) for r in requests}
    finally:
        for replica in replicas:
            replica.stop()

    for request in requests:
        replies = threads[request.id]
        # a reply posted while the channel's budget held it back carries the steps that ended
        # meanwhile as lines of its own (bot/step_replies.py): count step lines, not replies
        places = [int(n) for r in replies for n in re.findall(r"Step (\d)/8", r)]
        assert places == list(range(1, 9)), replies  # each step once, in order
        assert all(r.startswith(":white_check_mark: Step ") for r in replies[:-1]), replies
        assert replies[-1].startswith(":tada:"), replies
    posted = [
        c
        for c in bot.sim.calls_to("chat.postMessage")
        if c.params.get("thread_ts") in {r.message_ts for r in requests}
    ]
    # nothing posted twice (edits aside): one post per reply the threads show
    assert len(posted) == sum(len(threads[r.id]) for r in requests)


def _announcements(bot: BotHarness) -> list[dict]:
    return [m for m in bot.messages() if "A host arrived" in text_of(m)]


def _probes(world: World, host: str) -> int:
    """How often the host's API server was asked its version: once per probe of the host."""
    return len([r for r in world.cluster(host).requests if r.path.startswith("/version")])


def test_two_replicas_one_arrivals_watcher_each_host_probed_once_and_handed_over(
    make_bot, world, tmp_path
):
    """Two watchers would both probe a new host (its announcement is claimed once either way).
    One replica watches; when it stops, the other watches on."""
    hosts = tmp_path / "hosts.d"
    bot = make_bot(**arrivals_config(world, tmp_path, hosts, channel=CHANNEL_ID, propose=PROPOSE))
    assert bot.arrivals is not None
    bot.arrivals.stop()  # the harness's own watcher and relay: the replicas' take their place
    bot.relay.stop()
    world.add_cluster(
        "host-2",
        version="v1.32.0",
        control_plane_endpoint="h2.test:6443",
        nodes=[NodeSpec("node-2", role="control-plane")],
    )
    replicas = [
        Leader(Lease(bot.redis, LEADER_KEY, name), leading_parts(bot.ctx), name).start()
        for name in ("replica-a", "replica-b")
    ]
    try:
        first = until(lambda: next((r for r in replicas if r.leading), None), 30)
        drop_host(world, hosts, "host-1")
        bot.sim.wait_for(lambda: len(_announcements(bot)) == 1, 30)
        first.stop()  # a rolling restart stops the replica that watches
        other = next(r for r in replicas if r is not first)
        assert other.wait_leading(True, 30)
        drop_host(world, hosts, "host-2")
        bot.sim.wait_for(lambda: len(_announcements(bot)) == 2, 30)
        # the round that announced it ends after the post Slack shows: its count comes next
        until(lambda: other.running[-1].rounds >= 1, 30)  # type: ignore[attr-defined]
    finally:
        for replica in replicas:
            replica.stop()
    assert [_probes(world, host) for host in ("host-1", "host-2")] == [1, 1]
    assert len(_announcements(bot)) == 2
