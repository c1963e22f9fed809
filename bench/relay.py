"""The relay's Slack calls: what one migration, 25 at once and a 16-node batch cost in Web API
calls, and how many 429s they met, against a Slack that enforces its rate tiers.

A `joinops serve --http` subprocess and two `joinops worker` processes over simulated clusters;
slacksim enforces Slack's tiers `SPEED` times faster than Slack does (the bot's
`slack.rate_scale` is set to the same, so the shape of the limits is met without Slack's
minutes). Requests are made and approved as Slack would deliver them (signed slash commands
and clicks). A run ends when every request's thread has its final line and every root message
shows its outcome.

The floor is what a user reads: the request message, each line of its thread (and its edit, for
a line that shows a step's end in place of its start), and two updates of the root message
(approved, finished). Anything above it is updates coalesced away too late
or retries.

Also counted: the thread's notifications (slacksim's: every new message notifies, an edit does
not) — a migration's steps are one reply each, edited in place — and each thread's lag: from
the engine's final event (its `at`, in the request's own stream `joinops:events:<id>`) to the
moment slacksim stored the thread's last line (`Call.answered`: a post or an edit of one of its
replies). Both clocks are this machine's wall clock; the lag is in sped-up time (`SPEED`).
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from bench.ack import free_port, wait_healthy
from bench.report import Figure, Result
from bench.support import (
    fresh_redis,
    message_text,
    start_process,
    start_worker,
    stop_process,
    write_config,
)
from joinops.requests.events import REQUEST_STREAM, Event
from kubesim import NodeSpec, World
from slacksim.server import Call, SlackSim
from slacksim.signing import CHANNEL_ID, block_actions_body, deliver, slash_command_body
from slacksim.tiers import Tiers

SECRET = "bench-relay-signing-secret"
SPEED = 10.0  # the tiers, and the bot's pacing, this many times Slack's rates
REQUESTER = "U0USER0001"
APPROVER = "UAPPROVER1"  # bench.support.APPROVERS
RUN_TIMEOUT = 600.0
FINAL = (":tada:", ":red_circle:", ":white_circle:")
OUTCOMES = ("Succeeded", "moved, ")  # a single's root, a batch's root ("16 of 16 moved, …")


@dataclass(frozen=True)
class Sizes:
    concurrent: int  # single migrations asked and approved at once
    batch: int  # single-node clusters stitched by one batch request


@dataclass(frozen=True)
class Spend:
    """The Slack calls of one scenario."""

    requests: int  # migrations (a batch counts its nodes)
    calls: dict[str, int]  # Web API calls by method
    limited: int  # answered 429
    limited_by: dict[str, int]  # answered 429, by method
    floor: int  # the request messages, their thread lines and two root updates each
    seconds: float
    notifications: int  # new messages in the requests' threads (edits notify nobody)
    lags: list[float]  # per thread: its last line stored, after the engine's final event (s)

    @property
    def total(self) -> int:
        return sum(self.calls.values())


class Bench:
    """One served bot, its workers and Slack; `ask` runs one scenario and counts its calls."""

    def __init__(self, slack: SlackSim, events_url: str, store: redis.Redis) -> None:
        self.slack, self.events_url, self.store = slack, events_url, store
        self._ids = 0

    def _url(self) -> str:
        self._ids += 1
        return self.slack.response_url(f"r{self._ids}", channel=CHANNEL_ID, user=REQUESTER)

    def slash(self, text: str) -> None:
        body = slash_command_body(text=text, user_id=REQUESTER, response_url=self._url())
        assert deliver(self.events_url, body, SECRET).status == 200

    def approve(self, request_id: str, message_ts: str) -> None:
        body = block_actions_body(
            action_id="join_approve",
            value=request_id,
            user_id=APPROVER,
            message_ts=message_ts,
            response_url=self._url(),
        )
        assert deliver(self.events_url, body, SECRET).status == 200

    def ask(self, texts: list[str], migrations: int) -> Spend:
        before = set(self.slack.messages(CHANNEL_ID))
        first_call = len(self.slack.calls)
        limited = self.slack.tiers.limited
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=min(len(texts), 25)) as pool:
            list(pool.map(self.slash, texts))
            roots = self._wait(lambda: self._new_roots(before, len(texts)))
            list(pool.map(lambda root: self.approve(_request_id(root), root["ts"]), roots))
        for root in roots:
            self._wait(lambda ts=root["ts"]: self._ended(ts))  # type: ignore[misc]
        seconds = time.perf_counter() - started
        calls = [c for c in self.slack.calls[first_call:] if c.method != "auth.test"]
        threads = [self.slack.thread(CHANNEL_ID, root["ts"]) for root in roots]
        lines = sum(len(replies) + sum("edited" in m for m in replies) for replies in threads)
        return Spend(
            requests=migrations,
            calls=dict(Counter(c.method for c in calls if _counted(c))),
            limited=self.slack.tiers.limited - limited,
            limited_by=dict(Counter(c.method for c in calls if c.status == 429)),
            floor=len(roots) * 3 + lines,
            seconds=seconds,
            notifications=sum(self.slack.notifications(CHANNEL_ID, r["ts"]) for r in roots),
            lags=[self._lag(root, calls) for root in roots],
        )

    def _lag(self, root: dict[str, Any], calls: list[Call]) -> float:
        """Seconds from the request's final event to its thread's last line in slacksim."""
        entries = self.store.xrevrange(REQUEST_STREAM + _request_id(root), count=1)
        final = Event.from_json(_s(entries[0][1][b"event"])).at
        ts = root["ts"]
        replies = {m["ts"] for m in self.slack.thread(CHANNEL_ID, ts)}
        said = [
            c.answered
            for c in calls
            if c.response.get("ok")
            and (
                (c.method == "chat.postMessage" and c.params.get("thread_ts") == ts)
                or (c.method == "chat.update" and c.params.get("ts") in replies)
            )
        ]
        return max(said, default=final) - final

    def _new_roots(self, before: set[str], count: int) -> list[dict[str, Any]] | None:
        roots = [m for ts, m in self.slack.messages(CHANNEL_ID).items() if ts not in before]
        ready = [m for m in roots if _request_id(m)]
        return ready if len(ready) >= count else None

    def _ended(self, ts: str) -> bool:
        replies = self.slack.thread(CHANNEL_ID, ts)
        root = self.slack.messages(CHANNEL_ID)[ts]
        said = any(str(r.get("text", "")).startswith(FINAL) for r in replies)
        return said and any(word in message_text(root) for word in OUTCOMES)

    def _wait(self, predicate: Callable[[], Any]) -> Any:
        return self.slack.wait_for(predicate, timeout=RUN_TIMEOUT)


def _s(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _counted(call: Call) -> bool:
    """Calls of the requests' messages and threads (not ephemeral answers to response_urls)."""
    return call.method.startswith("chat.")


def _request_id(message: dict[str, Any]) -> str:
    for block in message.get("blocks") or []:
        for element in block.get("elements") or []:
            if element.get("action_id") == "join_approve":
                return str(element["value"])
    return ""


def _world(world: World, sizes: Sizes) -> None:
    world.add_cluster(
        "clusterA",
        version="v1.31.4",
        control_plane_endpoint="cp.a.test:6443",
        nodes=[NodeSpec("a-cp-1", role="control-plane")],
    ).add_nodes(sizes.concurrent + 1, prefix="w")
    world.add_cluster(
        "clusterB",
        version="v1.32.2",
        control_plane_endpoint="cp.b.test:6443",
        nodes=[NodeSpec("b-cp-1", role="control-plane")],
    )
    for i in range(1, sizes.batch + 1):
        world.add_cluster(
            f"host-{i:02}",
            version="v1.32.1",
            control_plane_endpoint=f"h{i}.test:6443",
            nodes=[NodeSpec(f"host-{i:02}-n", role="control-plane")],
        )


def run(sizes: Sizes, url: str) -> Result:
    with (
        World(pod_grace_seconds=0.05, join_seconds=0.1) as world,
        SlackSim(tiers=Tiers(SPEED), clock=time.time) as slack,  # the engine's clock: lags
        tempfile.TemporaryDirectory(prefix="bench-relay-") as tmp,
    ):
        _world(world, sizes)
        directory = Path(tmp)
        connection = fresh_redis(url)
        overrides = {
            "max_parallel": 16,
            "slack": {"rate_scale": SPEED},
            "policy": {"max_open_requests_per_user": 100},  # 25 at once from one person
        }
        config = write_config(world, directory, **overrides)
        env = {
            "JOINOPS_CONFIG": str(config),
            "REDIS_URL": url,
            "SLACK_BOT_TOKEN": slack.token,
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": slack.api_url,
        }
        port = free_port()
        bot = start_process(
            ["serve", "--http", "--host", "127.0.0.1", "--port", str(port)],
            directory / "bot.log",
            env,
        )
        workers = [start_worker(config, url, directory / f"worker-{i}.log") for i in (1, 2)]
        try:
            wait_healthy(f"http://127.0.0.1:{port}/healthz", bot, directory / "bot.log")
            bench = Bench(slack, f"http://127.0.0.1:{port}/slack/events", connection)
            alone = bench.ask(["w-1 from clusterA to clusterB"], 1)
            many = [f"w-{i} from clusterA to clusterB" for i in range(2, sizes.concurrent + 2)]
            together = bench.ask(many, sizes.concurrent)
            hosts = " ".join(f"host-{i:02}-n" for i in range(1, sizes.batch + 1))
            batch = bench.ask([f"{hosts} to clusterB"], sizes.batch)
        finally:
            for process in (bot, *workers):
                stop_process(process)
        connection.flushdb()
    return _result(sizes, {"alone": alone, "together": together, "batch": batch})


def _result(sizes: Sizes, spends: dict[str, Spend]) -> Result:
    def figure(key: str, what: str) -> Figure:
        spend = spends[key]
        return Figure(
            f"{what}: chat.* calls",
            spend.total,
            "calls",
            f"floor {spend.floor} (messages, thread lines and their edits, two root updates "
            "each); "
            f"{spend.limited} answered 429 {dict(sorted(spend.limited_by.items()))}; "
            f"{dict(sorted(spend.calls.items()))}; "
            f"{spend.notifications} thread notifications; "
            f"last line at most {max(spend.lags):.2f} s after the engine's final event",
        )

    return Result(
        "relay",
        "The relay's Slack calls under Slack's rate tiers",
        params={
            "concurrent": sizes.concurrent,
            "batch": sizes.batch,
            "tiers_speed": SPEED,
            "workers": 2,
        },
        figures=[
            figure("alone", "one migration"),
            figure("together", f"{sizes.concurrent} migrations at once"),
            figure("batch", f"a {sizes.batch}-node batch"),
        ],
        samples={key: {**spend.__dict__, "total": spend.total} for key, spend in spends.items()},
    )
