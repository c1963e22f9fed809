"""Ack latency: signed `/join` commands over HTTP against `joinops serve --http`.

Measured: time from opening the connection to the end of the HTTP response (the ack), for
`commands` signed slash commands sent `concurrency` at a time to a `joinops serve --http`
subprocess, with slacksim as its SLACK_API_URL and simulated clusters behind it. Each command is
a valid one-node request, so after its ack the bot checks the rules against the clusters and
posts a request message; a round ends when every message is posted, so rounds do not overlap.
Compared against a bare bolt app that only acks, served the same way, in the same run
(`bench.bolt_floor`), and against the figures in shared/docs/performance.md.

Apples to apples: the bare bolt app and the bot are up side by side, with the same background
processes present, and their rounds alternate (`interleaved`): each meets the same moments of a
shared machine. What stands for other machines in production runs at the lowest CPU priority
(`OTHER_MACHINES`, nice 19, and their sessions too: bench/ack_groups.py): the two workers (their
own pods), and the simulated clusters and Slack (API servers, slack.com; threads of this
process). What shares the bot's pod stays as the chart runs it: the post-ack process in
`SCHED_IDLE` (`--post-ack-priority idle`, bot/post_ack_priority.py) within the bot's session,
which is the cost measured — on its pod's CPU the work after the acks does compete with them.
Redis, the proxy and the sending process stay at full priority, each in a session of its own:
each is on the path of every ack, the bare bolt app's too (Redis only the bot's: its one XADD
per ack). The sending process's CPU over each round (`loader_busy`, 1.0 = one core) says whether
the client itself limited the figures.
"""

from __future__ import annotations

import multiprocessing
import os
import socket
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import ack_groups, ack_replicas, load
from bench.report import Figure, Result
from bench.support import (
    OTHER_MACHINES,
    Footprint,
    cpu_seconds,
    fresh_redis,
    lower_other_threads,
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
    loader_busy: float = 0.0  # the sending process's CPU over the round's wall time (1 = a core)

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


@dataclass
class Series:
    """One server measured by `interleaved`: where to send, what, and whose CPU to count."""

    url: str
    texts: Callable[[int], list[str]]
    pids: list[int]  # the server's processes (a bot's post-ack process counted as a child)
    posted: Callable[[int], None] | None = None  # waits for n request messages, for a bot
    sent: int = 0
    out: list[Round] = field(default_factory=list)


def interleaved(
    loader: ProcessPoolExecutor, response_url: str, pace: Pace, series: dict[str, Series]
) -> dict[str, list[Round]]:
    """Warm every series up, then `pace.repeats` times one round of each in turn: the servers
    compared meet the same moments of the machine (other suites come and go). A bot's round
    ends only once it has posted a request message for each command sent so far, so the next
    round, of whichever server, starts on a quiet bot."""
    loader_pid = loader.submit(os.getpid).result()
    for one in series.values():
        _round(loader, loader_pid, response_url, one, pace.warmup, pace.concurrency)
    for _ in range(pace.repeats):
        for one in series.values():
            made = _round(loader, loader_pid, response_url, one, pace.count, pace.concurrency)
            one.out.append(made)
    return {name: one.out for name, one in series.items()}


def _round(
    loader: ProcessPoolExecutor,
    loader_pid: int,
    response_url: str,
    series: Series,
    size: int,
    concurrency: int,
) -> Round:
    pids = series.pids
    cpu, acking = tree_cpu_seconds(pids), sum(cpu_seconds(p) for p in pids)
    sending = cpu_seconds(loader_pid)
    started = time.perf_counter()
    answers = loader.submit(
        load.fire, series.url, SECRET, series.texts(size), concurrency, response_url
    ).result()
    seconds = time.perf_counter() - started
    loader_busy = (cpu_seconds(loader_pid) - sending) / seconds
    series.sent += size
    if series.posted is not None:
        series.posted(series.sent)
    waited = time.perf_counter() - started - seconds
    made = Round.of(answers, seconds, waited, tree_cpu_seconds(pids) - cpu)
    made.ack_cpu_ms_per_command = (sum(cpu_seconds(p) for p in pids) - acking) * 1000 / len(answers)
    made.loader_busy = loader_busy
    return made


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
        ProcessPoolExecutor(1, mp_context=spawn, initializer=ack_groups.own_session) as loader,
        ack_groups.this_session_lowered(),  # the simulated clusters and Slack: other machines
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

        def ours(events: str, pids: list[int], texts: Callable[[int], list[str]]) -> Series:
            return Series(events, texts, pids, waiter())

        def floor_of(events: str, pids: list[int]) -> Series:
            return Series(events, valid, pids)

        # the rule checks are the workers' (joinops.asking): the chart's two, as deployed, on
        # machines of their own in production: here at the lowest priority
        workers = [
            start_worker(config, url, directory / f"worker-{i}.log", niceness=OTHER_MACHINES)
            for i in (1, 2)
        ]
        for worker in workers:  # each in a session of its own: the session's niceness too
            ack_groups.lower_session(worker.pid)
        loader.submit(os.getpid).result()  # the sending process, started at full priority
        lower_other_threads()  # the simulated clusters and Slack: other machines too
        bot_port, floor_port = free_port(), free_port()
        bot_log, floor_log = directory / "bot.log", directory / "floor.log"
        bot = start_process(ack_replicas.serve_args(bot_port), bot_log, env)
        floor = start_process(
            ["--port", str(floor_port)], floor_log, env, module="bench.bolt_floor"
        )
        try:
            wait_healthy(f"http://127.0.0.1:{bot_port}/healthz", bot, bot_log)
            wait_healthy(f"http://127.0.0.1:{floor_port}/", floor, floor_log)
            _sample(footprint, bot.pid, idle=True)
            events = f"http://127.0.0.1:{bot_port}/slack/events"
            floor_events = f"http://127.0.0.1:{floor_port}/slack/events"
            together = interleaved(
                loader,
                response_url,
                burst,
                {
                    "bolt_floor": floor_of(floor_events, [floor.pid]),
                    "joinops_help": Series(events, help_only, [bot.pid]),
                    "joinops": ours(events, [bot.pid], valid),
                },
            )
            one_at_a_time = interleaved(
                loader,
                response_url,
                alone,
                {
                    "bolt_floor": floor_of(floor_events, [floor.pid]),
                    "joinops": ours(events, [bot.pid], valid),
                },
            )
            _sample(footprint, bot.pid)
            peaks = [proc_status_kib(p, "VmHWM") or 0 for p in (bot.pid, *children(bot.pid))]
        finally:
            stop_process(bot)
            stop_process(floor)
        try:

            def replicas(events: str, pids: list[int]) -> dict[str, list[Round]]:
                def beside(floor_events: str, floor_pids: list[int]) -> dict[str, list[Round]]:
                    return interleaved(
                        loader,
                        response_url,
                        burst,
                        {
                            "bolt_floor_2_replicas": floor_of(floor_events, floor_pids),
                            "joinops_2_replicas": ours(events, pids, valid),
                        },
                    )

                measured: dict[str, list[Round]] = ack_replicas.behind_one_port(
                    beside, env, directory, free_port, wait_healthy, floor=True
                )
                return measured

            two = ack_replicas.behind_one_port(
                replicas, env, directory, free_port, wait_healthy, floor=False
            )
        finally:
            for worker in workers:
                stop_process(worker)
        connection.flushdb()
    return _result(
        sizes,
        {**together, **two},
        one_at_a_time,
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
