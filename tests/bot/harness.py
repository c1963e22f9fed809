"""The bot served over real HTTP, Slack simulated, clusters simulated, Redis real.

`BotHarness` (made by the `make_bot` fixture, with config overrides) starts one: the bolt app on
waitress (loopback, a free port), the relay thread, and helpers to send signed slash commands and
clicks as Slack does. `connect_socket()` also runs the same app over Socket Mode (slacksim's
WebSocket); `socket_slash` and `socket_click` then send through it. `start_worker` runs a real
`joinops worker` process on the same configuration.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import redis

from bench.support import block_texts
from bot.app import build_app, build_context
from bot.arrivals import ArrivalWatcher
from bot.availability import StoreProbe, StoreWatch
from bot.click_pool import ClickPool
from bot.context import BotContext
from bot.http import SlackWsgi
from bot.relay import Relay
from bot.serve import HttpServer
from bot.socket_mode import SocketModeBot
from joinops.clusters.registry import ClusterRegistry
from joinops.queue import queue
from joinops.requests.store import Request
from joinops.settings import FileConfig, Secrets, Settings, build_settings
from kubesim import World
from kubesim.cluster import Cluster
from kubesim.http_messages import Request as ClusterRequest
from kubesim.http_messages import Response as ClusterResponse
from slacksim.server import SlackSim
from slacksim.signing import CHANNEL_ID, Delivery, block_actions_body, deliver, slash_command_body
from tests.support.check_worker import CheckWorker
from tests.support.clusters import config_dict, write_config
from tests.support.engine import start_worker, stop_worker

SECRET = "bot-test-signing-secret"
# Slack's contract, not a measure of the bot: a slash command or an interaction that is not
# acknowledged within 3000 ms shows the person an error ("operation_timeout"), whatever comes
# after. Tests prove an ack waits on nothing by holding what it must not wait for (slacksim's
# `sim.holds`, `HeldClusterRequest`); this bound is only for an ack nothing can be held against.
SLACK_ACK_DEADLINE = 3.0
# slacksim enforces Slack's rate tiers this many times faster than Slack, and the bot keeps to
# them at the same scale: every test meets the limits' shape without waiting Slack's minutes.
SLACK_SPEED = 10.0
CHANNEL = CHANNEL_ID
REQUESTER = "U0USER0001"
APPROVER = "UAPPROVER1"
APPROVER2 = "UAPPROVER2"
GROUP = "S0APPROVERS"
GROUP_MEMBER = "UGROUPMEMBER"
STRANGER = "USTRANGER1"
T = TypeVar("T")


def until(predicate: Callable[[], T], timeout: float) -> T:
    """Re-check a condition on Redis-held state until it holds (bounded; no fixed sleep)."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not (result := predicate()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"condition not met within {timeout} s")
        pause.wait(0.005)
    return result


def text_of(message: dict[str, Any]) -> str:
    """Every text inside a message's blocks, one per line (its `text` when it has no blocks)."""
    if not message.get("blocks"):
        return str(message.get("text") or "")
    return "\n".join(block_texts(message["blocks"]))


def buttons(message: dict[str, Any]) -> list[tuple[str, str]]:
    """(action_id, value) of every button in a message."""
    return [
        (element["action_id"], element.get("value", ""))
        for block in message.get("blocks") or []
        if block.get("type") == "actions"
        for element in block.get("elements", [])
    ]


class HeldClusterRequest:
    """The first request to one of `clusters` that matches (`method`, a `path` fragment),
    held before the simulated API server acts on it until `release()`: a cluster as slow as the
    test wants, without a latency to guess. The test sends a command, sees its ack while the
    worker's check is still inside this request, then lets it go. A context manager: leaving it
    releases the request (whatever failed) and puts the clusters' `serve` back."""

    HELD_AT_MOST = 60.0  # a test that never releases: the server thread gives up, not hangs

    def __init__(self, clusters: list[Cluster], method: str = "GET", path: str = "") -> None:
        self.method, self.path = method, path
        self.arrived = threading.Event()
        self.caught: tuple[str, str] | None = None  # (cluster, path) of the held request
        self._let_go = threading.Event()
        self._lock = threading.Lock()
        self._patched: list[tuple[Cluster, Any, Any]] = []  # (cluster, its own serve, ours)
        for cluster in clusters:
            ours = self._serving(cluster, cluster.serve)
            self._patched.append((cluster, cluster.__dict__.get("serve"), ours))
            cluster.serve = ours  # type: ignore[method-assign]

    def _serving(
        self, cluster: Cluster, serve: Callable[[ClusterRequest], ClusterResponse]
    ) -> Callable[[ClusterRequest], ClusterResponse]:
        def serving(req: ClusterRequest) -> ClusterResponse:
            if self._catches(cluster, req):
                self.arrived.set()
                self._let_go.wait(self.HELD_AT_MOST)
            return serve(req)

        return serving

    def _catches(self, cluster: Cluster, req: ClusterRequest) -> bool:
        if req.method != self.method or self.path not in req.path:
            return False
        with self._lock:
            if self.caught is not None:
                return False
            self.caught = (cluster.name, req.path)
            return True

    def wait_arrived(self, timeout: float = 30.0) -> None:
        if not self.arrived.wait(timeout):
            raise TimeoutError(f"no {self.method} {self.path!r} came within {timeout} s")

    def release(self) -> None:
        self._let_go.set()
        for cluster, own, ours in self._patched:
            if cluster.__dict__.get("serve") is not ours:
                continue  # patched again since (HeldCall): ours stays, passing every request
            if own is None:
                del cluster.serve
            else:
                cluster.serve = own  # type: ignore[method-assign]
        self._patched = []

    def __enter__(self) -> HeldClusterRequest:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class BotHarness:
    def __init__(
        self,
        world: World,
        sim: SlackSim,
        redis_url: str,
        directory: Path,
        overrides: dict,
        clock: Callable[[], float] = time.time,
        check_worker: bool = True,
    ) -> None:
        self.world, self.sim, self.redis_url, self.directory = world, sim, redis_url, directory
        self.overrides = {
            "approvers": [APPROVER, APPROVER2, GROUP],
            "slack": {"rate_scale": sim.tiers.speed},
            **overrides,
        }
        raw = config_dict(world, directory / "kubeconfig", **self.overrides)
        secrets = Secrets(
            redis_url=redis_url,
            slack_bot_token=sim.token,
            slack_signing_secret=SECRET,
            slack_api_url=sim.api_url,
        )
        self.settings: Settings = build_settings(FileConfig.model_validate(raw), secrets)
        self.redis = redis.Redis.from_url(redis_url)
        # the workers' side of the bot's checks (joinops.asking): a real RQ worker, in a thread
        self.check_worker = CheckWorker(self.settings) if check_worker else None
        self.ctx: BotContext = build_context(
            self.settings, redis=self.redis, clusters=ClusterRegistry(self.settings), clock=clock
        )
        self.executor = ThreadPoolExecutor(max_workers=16, thread_name_prefix="test-bot")
        self.work_pool = ThreadPoolExecutor(max_workers=16, thread_name_prefix="test-bot-work")
        self.click_pool = ClickPool()
        # what the acks know of Redis (a PING every half second): tests that stop Redis wait on it
        self.store_watch = StoreWatch(StoreProbe(redis_url))
        self.app = build_app(
            self.settings,
            redis=self.redis,
            clusters=self.ctx.clusters,
            context=self.ctx,
            listener_executor=self.executor,
            work_pool=self.work_pool,
            click_pool=self.click_pool,
            store_watch=self.store_watch,
        )
        # A consumer group of its own: a module's tests may share one Redis database.
        self.relay = Relay(self.ctx, group=f"test-{uuid.uuid4().hex[:8]}", block_ms=100).start()
        self.arrivals = ArrivalWatcher(self.ctx).start() if self.settings.arrivals else None
        self.server = HttpServer(
            SlackWsgi(
                self.app,
                SECRET,
                healthy=lambda: self.relay.alive,
                ready=lambda: self.ctx.token.problem() or StoreProbe(redis_url).problem(),
            ),
            "127.0.0.1",
            0,
            8,
        ).start()
        self.events_url = self.server.url + "/slack/events"
        self._ids = itertools.count(1)
        self.workers: list[Any] = []
        self.socket: SocketModeBot | None = None

    def stop(self) -> None:
        try:
            for process in self.workers:
                stop_worker(process)
            if self.socket is not None:
                self.socket.close()
            self.server.stop()
        finally:  # whatever failed above, no thread of this bot may outlive its test
            self.executor.shutdown(wait=True)
            self.work_pool.shutdown(wait=True)  # work waiting for a check: the worker answers
            self.click_pool.shutdown()  # so do clicks waiting for one
            if self.check_worker is not None:
                self.check_worker.stop()
            self.store_watch.close()
            self.relay.stop()
            if self.arrivals is not None:
                self.arrivals.stop()
            self.ctx.clusters.close()
            self.redis.close()

    # ---- Slack in --------------------------------------------------------------------------

    def slash(self, text: str, user: str = REQUESTER, **sign: Any) -> tuple[Delivery, str]:
        """Send `/join text` as `user`; returns the answer and the response_url's id."""
        rid = f"cmd-{next(self._ids)}"
        url = self.sim.response_url(rid, channel=CHANNEL, user=user)
        body = slash_command_body(text=text, user_id=user, response_url=url)
        return deliver(self.events_url, body, SECRET, **sign), rid

    def click(
        self, action: str, request_id: str, user: str, value: str | None = None
    ) -> tuple[Delivery, str]:
        """Click a button of the request's message (`value`: the button's, if not the id)."""
        request = self.request(request_id)
        rid = f"click-{next(self._ids)}"
        url = self.sim.response_url(rid, channel=CHANNEL, user=user, message_ts=request.message_ts)
        body = block_actions_body(
            action_id=action,
            value=request_id if value is None else value,
            user_id=user,
            message_ts=request.message_ts,
            response_url=url,
        )
        return deliver(self.events_url, body, SECRET), rid

    def approve(self, request_id: str, user: str = APPROVER) -> tuple[Delivery, str]:
        return self.click("join_approve", request_id, user)

    # ---- Slack in, over Socket Mode ---------------------------------------------------------

    def connect_socket(self, ping_interval: float = 0.5) -> SocketModeBot:
        """Run this bot's app over Socket Mode too (the short ping interval makes the SDK notice
        a dropped link within about two seconds)."""
        self.socket = SocketModeBot(
            self.app, self.sim.app_token, self.ctx.client, ping_interval=ping_interval
        ).connect()
        self.sim.socket.wait_connected()
        return self.socket

    def socket_slash(self, text: str, user: str = REQUESTER) -> tuple[dict[str, Any], str]:
        """`/join text` as `user` over the socket; returns the ack and the response_url's id."""
        rid = f"cmd-{next(self._ids)}"
        url = self.sim.response_url(rid, channel=CHANNEL, user=user)
        envelope = self.sim.socket.slash_command(text=text, user_id=user, response_url=url)
        return self.sim.socket.wait_ack(envelope), rid

    def socket_click(
        self, action: str, request_id: str, user: str, value: str | None = None
    ) -> tuple[dict[str, Any], str]:
        """Click a button of the request's message over the socket."""
        request = self.request(request_id)
        rid = f"click-{next(self._ids)}"
        url = self.sim.response_url(rid, channel=CHANNEL, user=user, message_ts=request.message_ts)
        envelope = self.sim.socket.block_actions(
            action_id=action,
            value=request_id if value is None else value,
            user_id=user,
            message_ts=request.message_ts,
            response_url=url,
        )
        return self.sim.socket.wait_ack(envelope), rid

    # ---- Slack out -------------------------------------------------------------------------

    def answers(self, rid: str) -> list[str]:
        """The ephemeral answers sent to one response_url."""
        return [text_of(body) for body in self.sim.responses(rid)]

    def wait_answer(self, rid: str, timeout: float = 60) -> str:
        return self.sim.wait_for(lambda: self.answers(rid), timeout)[-1]

    def messages(self) -> list[dict[str, Any]]:
        return list(self.sim.messages(CHANNEL).values())

    def wait_message(self, timeout: float = 60) -> dict[str, Any]:
        """The newest top-level message in the channel, once there is one."""
        return self.sim.wait_for(lambda: self.messages(), timeout)[-1]

    def root(self, request_id: str) -> dict[str, Any]:
        return self.sim.messages(CHANNEL)[self.request(request_id).message_ts]

    def thread(self, request_id: str) -> list[str]:
        return [text_of(m) for m in self.sim.thread(CHANNEL, self.request(request_id).message_ts)]

    def wait_thread(
        self, request_id: str, predicate: Callable[[list[str]], Any], timeout: float = 90
    ) -> list[str]:
        ts = self.request(request_id).message_ts

        def check() -> list[str] | None:
            replies = [text_of(m) for m in self.sim.thread(CHANNEL, ts)]
            return replies if predicate(replies) else None

        return self.sim.wait_for(check, timeout)

    def wait_root(
        self, request_id: str, predicate: Callable[[str], Any], timeout: float = 90
    ) -> dict[str, Any]:
        ts = self.request(request_id).message_ts

        def check() -> dict[str, Any] | None:
            message = self.sim.messages(CHANNEL)[ts]
            return message if predicate(text_of(message)) else None

        return self.sim.wait_for(check, timeout)

    # ---- state -----------------------------------------------------------------------------

    def request(self, request_id: str) -> Request:
        found = self.ctx.store.get(request_id)
        assert found is not None, request_id
        return found

    def only_request(self) -> Request:
        active = self.ctx.store.recent(10)
        assert len(active) == 1, [r.id for r in active]
        return active[0]

    def request_from_message(self, message: dict[str, Any]) -> Request:
        """The request a message's buttons are for, once the bot has stored it (it posts first,
        then stores the request with the message's ts: a test can see the message a moment
        before that)."""
        values = {value for _, value in buttons(message)}
        assert len(values) == 1, message
        request_id = values.pop()
        return until(lambda: (r := self.ctx.store.get(request_id)) and r.message_ts and r, 5)

    def jobs(self) -> list[str]:
        return [j for j in queue(self.redis).job_ids]

    def start_worker(self) -> Any:
        config = write_config(self.world, self.directory, **self.overrides)
        name = f"worker-{len(self.workers) + 1}"
        process = start_worker(config, self.redis_url, self.directory / f"{name}.log")
        self.workers.append(process)
        return process

    def worker_log(self) -> str:
        return "\n".join(
            p.read_text(errors="replace") for p in sorted(self.directory.glob("worker-*.log"))
        )


def ack_text(delivery: Delivery) -> str:
    """The immediate (ephemeral) answer in the HTTP response, if any."""
    if not delivery.body:
        return ""
    return text_of(json.loads(delivery.body))
