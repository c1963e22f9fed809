"""Ack latency: signed `/join` commands over HTTP against `joinops serve --http`.

Measured: time from opening the connection to the end of the HTTP response (the ack), for
`commands` signed slash commands sent `concurrency` at a time to a `joinops serve --http`
subprocess, with slacksim as its SLACK_API_URL and simulated clusters behind it. Each command is
a valid one-node request, so after its ack the bot checks the rules against the clusters and
posts a request message; a round ends when every message is posted, so rounds do not overlap.
Compared against a bare bolt app that only acks, served the same way, in the same run
(`bench.bolt_floor`), and against the figures in shared/docs/performance.md.
"""

from __future__ import annotations

import multiprocessing
import socket
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import ack_replicas, load
from bench.report import Figure, Result
from bench.support import (
    Footprint,
    cpu_seconds,
    fresh_redis,
    median,
    percentile,
    proc_status_kib,
    start_process,
    start_worker,
    stop_process,
    write_config,
)
from kubesim import NodeSpec, World
from slacksim.server import SlackSim
from slacksim.tiers import Tiers

SECRET = "bench-signing-secret"
TARGET_P99_MS = 50.0  # the aim on a 2-core machine; Slack's own limit is 3 s
SLACK_LIMIT_MS = 3000.0
WORKERS_IN_SOURCE = 20  # nodes the commands name, round-robin
START_TIMEOUT = 60.0  # seconds a server may take to answer its health check
DRAIN_TIMEOUT = 300.0  # seconds the bot may take to post every request message of a round
# Slack's rate tiers this many times faster: a round posts 500 request messages in one channel,
# which Slack's own 1 a second would spread over minutes (the relay row measures the tiers)
SLACK_SPEED = 1000.0


@dataclass(frozen=True)
class Sizes:
    commands: int  # signed /join commands per round
    concurrency: int  # commands in flight at once
    rounds: int  # rounds against each server; figures are medians over rounds
    warmup: int  # commands sent to each server first, not counted
    single: int  # commands sent one at a time per round (the latency without queueing)


@dataclass(frozen=True)
class Pace:
    """How one series of rounds is sent."""

    count: int  # commands per round
    concurrency: int  # commands in flight at once
    repeats: int  # rounds measured
    warmup: int  # commands sent first, not measured


@dataclass
class Round:
    p50_ms: float
    p99_ms: float
    max_ms: float
    errors: int  # answers that were not HTTP 200
    seconds: float  # wall time of the round's sends
    posted_seconds: float  # after the last ack, until every request message was posted
    cpu_ms_per_command: float  # the server's CPU time (its post-ack process's too), per command
    ack_cpu_ms_per_command: float = 0.0  # the acking process's alone

    @classmethod
    def of(
        cls, answers: list[load.Answer], seconds: float, posted_seconds: float, cpu: float
    ) -> Round:
        ms = [a.seconds * 1000 for a in answers]
        return cls(
            p50_ms=percentile(ms, 50),
            p99_ms=percentile(ms, 99),
            max_ms=max(ms),
            errors=sum(a.status != 200 for a in answers),
            seconds=seconds,
            posted_seconds=posted_seconds,
            cpu_ms_per_command=cpu * 1000 / len(answers),
        )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(url: str, process: Any, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited: {log.read_text()[-1500:]}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answers (bolt's bare app has no health path)
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"{url} did not answer within {START_TIMEOUT:.0f} s")


def valid(count: int) -> list[str]:
    """One-node requests the rules allow: each is checked and posted after its ack."""
    return [f"w-{i % WORKERS_IN_SOURCE + 1} from clusterA to clusterB" for i in range(count)]


def help_only(count: int) -> list[str]:
    """`/join help`: answered in the ack itself, no work after it."""
    return ["help"] * count


def rounds(
    loader: ProcessPoolExecutor,
    url: str,
    texts: Callable[[int], list[str]],
    response_url: str,
    pace: Pace,
    pids: list[int],
    posted: Callable[[int], None] | None = None,
) -> list[Round]:
    """Warm up, then `pace.repeats` rounds of `pace.count` commands, so many at a time. With
    `posted`, a round ends only once the bot has posted a request message for each command
    sent so far (`posted(n)` waits for n). The CPU is that of `pids` and their children (a
    bot's post-ack process)."""
    sent = 0
    out = []
    for number in range(pace.repeats + 1):  # round 0 warms up
        size = pace.warmup if number == 0 else pace.count
        cpu, acking = tree_cpu_seconds(pids), sum(cpu_seconds(p) for p in pids)
        started = time.perf_counter()
        answers = loader.submit(
            load.fire, url, SECRET, texts(size), pace.concurrency, response_url
        ).result()
        seconds = time.perf_counter() - started
        sent += size
        if posted is not None:
            posted(sent)
        if number > 0:
            waited = time.perf_counter() - started - seconds
            used = tree_cpu_seconds(pids) - cpu
            made = Round.of(answers, seconds, waited, used)
            made.ack_cpu_ms_per_command = (
                (sum(cpu_seconds(p) for p in pids) - acking) * 1000 / len(answers)
            )
            out.append(made)
    return out


def children(pid: int) -> list[int]:
    try:
        listed = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    return [int(child) for child in listed]


def tree_cpu_seconds(pids: list[int]) -> float:
    """CPU time of the processes and of their children so far (a bot and its post-ack one)."""
    return sum(cpu_seconds(p) + sum(cpu_seconds(c) for c in children(p)) for p in pids)


def _world(world: World) -> None:
    world.add_cluster(
        "clusterA",
        version="v1.31.4",
        control_plane_endpoint="cp.a.test:6443",
        nodes=[NodeSpec("a-cp-1", role="control-plane")],
    ).add_nodes(WORKERS_IN_SOURCE, prefix="w")
    world.add_cluster(
        "clusterB",
        version="v1.32.2",
        control_plane_endpoint="cp.b.test:6443",
        nodes=[NodeSpec("b-cp-1", role="control-plane")],
    )


def run(sizes: Sizes, url: str, footprint: Footprint) -> Result:
    spawn = multiprocessing.get_context("spawn")
    with (
        World() as world,
        SlackSim(tiers=Tiers(SLACK_SPEED)) as slack,
        tempfile.TemporaryDirectory(prefix="bench-ack-") as tmp,
        ProcessPoolExecutor(1, mp_context=spawn) as loader,
    ):
        _world(world)
        directory = Path(tmp)
        connection = fresh_redis(url)
        # every command is one person's: the per-person limit of open requests would refuse most
        config = write_config(
            world,
            directory,
            policy={"max_open_requests_per_user": 10_000},
            slack={"rate_scale": SLACK_SPEED},  # the bot keeps to the faster tiers
        )
        response_url = slack.response_url("bench")
        env = {
            "JOINOPS_CONFIG": str(config),
            "REDIS_URL": url,
            "SLACK_BOT_TOKEN": slack.token,
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": slack.api_url,
        }

        def waiter() -> Callable[[int], None]:
            """Waits until n more request messages than now have been posted."""
            base = len(slack.calls_to("chat.postMessage"))

            def wait(n: int) -> None:
                slack.wait_for_calls("chat.postMessage", base + n, timeout=DRAIN_TIMEOUT)

            return wait

        burst = Pace(sizes.commands, sizes.concurrency, sizes.rounds, sizes.warmup)
        alone = Pace(sizes.single, 1, sizes.rounds, warmup=5)

        port = free_port()
        bot_log = directory / "bot.log"
        # the rule checks are the workers' (joinops.asking): the chart's two, as deployed
        workers = [start_worker(config, url, directory / f"worker-{i}.log") for i in (1, 2)]
        bot = start_process(
            ["serve", "--http", "--host", "127.0.0.1", "--port", str(port)], bot_log, env
        )
        events = f"http://127.0.0.1:{port}/slack/events"
        try:
            wait_healthy(f"http://127.0.0.1:{port}/healthz", bot, bot_log)
            _sample(footprint, bot.pid, idle=True)
            pids = [bot.pid]
            quick = rounds(loader, events, help_only, response_url, burst, pids)
            ours = rounds(loader, events, valid, response_url, burst, pids, waiter())
            single = rounds(loader, events, valid, response_url, alone, pids, waiter())
            _sample(footprint, bot.pid)
            peaks = [proc_status_kib(p, "VmHWM") or 0 for p in (bot.pid, *children(bot.pid))]

            def two(events: str, pids: list[int]) -> list[Round]:
                return rounds(loader, events, valid, response_url, burst, pids, waiter())

            ours_two = ack_replicas.behind_one_port(
                two, env, directory, free_port, wait_healthy, floor=False
            )
        finally:
            stop_process(bot)
            for worker in workers:
                stop_process(worker)
        port = free_port()
        floor_log = directory / "floor.log"
        floor = start_process(["--port", str(port)], floor_log, env, module="bench.bolt_floor")
        try:
            wait_healthy(f"http://127.0.0.1:{port}/", floor, floor_log)
            events = f"http://127.0.0.1:{port}/slack/events"
            theirs = rounds(loader, events, valid, response_url, burst, [floor.pid])
            floor_single = rounds(loader, events, valid, response_url, alone, [floor.pid])
        finally:
            stop_process(floor)

        def floor_two(events: str, pids: list[int]) -> list[Round]:
            return rounds(loader, events, valid, response_url, burst, pids)

        theirs_two = ack_replicas.behind_one_port(
            floor_two, env, directory, free_port, wait_healthy, floor=True
        )
        connection.flushdb()
    return _result(
        sizes,
        {
            "joinops": ours,
            "joinops_help": quick,
            "bolt_floor": theirs,
            "joinops_2_replicas": ours_two,
            "bolt_floor_2_replicas": theirs_two,
        },
        {"joinops": single, "bolt_floor": floor_single},
        peaks,
    )


def _sample(footprint: Footprint, pid: int, idle: bool = False) -> None:
    """The bot's processes: the acking one and its post-ack one (each its own peak)."""
    for process in (pid, *children(pid)):
        footprint.sample("bot", process, idle=idle)


def _near(ours: float, floor: float) -> str:
    """Within 25 % or 10 ms of the bare bolt app: what bolt itself costs on this machine."""
    return "near bolt's floor" if ours <= max(floor * 1.25, floor + 10) else "above bolt's floor"


def _result(
    sizes: Sizes,
    burst: dict[str, list[Round]],
    alone: dict[str, list[Round]],
    peaks_kib: list[int],
) -> Result:
    def med(key: str, field: str, rounds: dict[str, list[Round]] = burst) -> float:
        return median(getattr(r, field) for r in rounds[key])

    p99 = med("joinops", "p99_ms")
    errors = sum(r.errors for key in ("joinops", "joinops_help") for r in burst[key])
    errors += sum(r.errors for r in alone["joinops"])
    floor_errors = sum(r.errors for rs in (burst["bolt_floor"], alone["bolt_floor"]) for r in rs)
    single, floor_single = med("joinops", "p50_ms", alone), med("bolt_floor", "p50_ms", alone)
    worst = max(r.max_ms for r in burst["joinops"])
    return Result(
        "ack",
        "Ack latency",
        params={
            "commands": sizes.commands,
            "concurrency": sizes.concurrency,
            "rounds": sizes.rounds,
            "warmup": sizes.warmup,
            "one_at_a_time": sizes.single,
            "command": "/join w-N from clusterA to clusterB (valid: checked and posted after ack)",
        },
        samples={
            **{key: [r.__dict__ for r in rs] for key, rs in burst.items()},
            **{f"{key}_one_at_a_time": [r.__dict__ for r in rs] for key, rs in alone.items()},
            "bot_processes_peak_kib": peaks_kib,  # the acking process, then its post-ack one
        },
        figures=[
            Figure(
                f"p50 ack, {sizes.commands} commands, {sizes.concurrency} at once "
                f"(median of {sizes.rounds} rounds)",
                med("joinops", "p50_ms"),
                "ms",
                f"bare bolt app, same server, same run: {med('bolt_floor', 'p50_ms'):.1f} ms",
                _near(med("joinops", "p50_ms"), med("bolt_floor", "p50_ms")),
            ),
            Figure(
                "p99 ack",
                p99,
                "ms",
                f"bare bolt app: {med('bolt_floor', 'p99_ms'):.1f} ms; performance.md: bolt "
                f"40-60 ms at 25 senders; target < {TARGET_P99_MS:.0f} ms",
                "below target" if p99 < TARGET_P99_MS else "ABOVE TARGET",
            ),
            Figure(
                "max ack",
                med("joinops", "max_ms"),
                "ms",
                f"bare bolt app: {med('bolt_floor', 'max_ms'):.1f} ms; Slack's limit 3,000 ms",
                "within Slack's limit" if worst < SLACK_LIMIT_MS else "OVER SLACK'S LIMIT",
            ),
            Figure(
                "p99 ack of `/join help` (nothing to do after the ack)",
                med("joinops_help", "p99_ms"),
                "ms",
                f"bare bolt app: {med('bolt_floor', 'p99_ms'):.1f} ms; p50 "
                f"{med('joinops_help', 'p50_ms'):.1f} ms vs {med('bolt_floor', 'p50_ms'):.1f} ms",
                _near(med("joinops_help", "p99_ms"), med("bolt_floor", "p99_ms")),
            ),
            Figure(
                f"p50 ack, one at a time ({sizes.single} commands)",
                single,
                "ms",
                f"bare bolt app: {floor_single:.1f} ms; performance.md: bolt about 12 ms",
                _near(single, floor_single),
            ),
            Figure(
                "bot CPU per valid command (ack, rule check, request message)",
                med("joinops", "cpu_ms_per_command"),
                "ms",
                f"per `/join help`: {med('joinops_help', 'cpu_ms_per_command'):.1f} ms; bare bolt "
                f"app: {med('bolt_floor', 'cpu_ms_per_command'):.1f} ms",
                f"at most {1000 / med('joinops', 'cpu_ms_per_command'):.0f} commands/s "
                "in one process",
            ),
            Figure(
                "answers other than HTTP 200",
                errors,
                "requests",
                f"bare bolt app: {floor_errors}; last request message posted "
                f"{med('joinops', 'posted_seconds'):.1f} s after the last ack",
                "none" if errors == 0 else "SOME FAILED",
            ),
        ],
    )
