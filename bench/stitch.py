"""Stitch: N single-node clusters into one target, one batch vs one migration after another.

Measured: a batch (`joinops.rules.batch.plan_nodes` + `create_batch`, started the way an approval
starts it) carried out by real `joinops worker` processes with `max_parallel` set (a number, or
`auto`: the workers choose when the batch starts, joinops/parallelism.py, and the number it ran
with is read back from the batch), from the batch's start to its final event. Compared against
the same N migrations, checked beforehand, enqueued one after another on the same workers, each
waited for before the next. Also: API requests per node (every cluster's request log, planning
included, divided by N), and the peak number of migrations observed running at once.

Every run gets its own target and sources in one simulated world, so the workers start once.
"""

from __future__ import annotations

import functools
import math
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import redis

from bench.report import Figure, Result
from bench.support import (
    CpuMeter,
    CpuShare,
    Footprint,
    fresh_redis,
    median,
    settings_for,
    start_worker,
    stop_process,
    wait_final,
    wait_workers_ready,
    write_config,
)
from joinops import parallelism
from joinops.clusters.registry import ClusterRegistry
from joinops.queue import enqueue_batch_advance, enqueue_migration
from joinops.requests.asks import MigrationAsk
from joinops.requests.events import EventKind, RedisEventLog
from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from joinops.requests.store import Request, RequestStore
from joinops.rules import batch as batches
from joinops.rules.check import check
from joinops.settings import MaxParallel, Settings
from kubesim import Cluster, NodeSpec, World

BATCH_TIMEOUT = 300.0  # seconds one run may take before the benchmark gives up


@dataclass(frozen=True)
class Sizes:
    nodes: int  # single-node source clusters stitched into one target
    join_seconds: float  # simulated reset-and-join time of each node
    workers: int  # `joinops worker` processes
    max_parallel: MaxParallel  # the `max_parallel` setting: a number or `auto`
    repeats: int  # runs of each kind (batch, one after another)
    curve: tuple[int, ...] = ()  # batch sizes also run once each, for the wall-time curve
    # the curve's sizes run again with joins as long as a real host's (0: not run)
    real_join_seconds: float = 0.0


@dataclass
class Run:
    """One stitch: its own target and sources, named by the run's number."""

    number: int
    nodes: int

    @property
    def target(self) -> str:
        return f"big-{self.number}"

    def source(self, i: int) -> str:
        return f"r{self.number}-host-{i}"

    def node(self, i: int) -> str:
        return f"r{self.number}-node-{i}"

    @property
    def cluster_names(self) -> list[str]:
        return [self.target] + [self.source(i) for i in range(1, self.nodes + 1)]

    def clusters(self, world: World) -> list[Cluster]:
        return [world.cluster(n) for n in self.cluster_names]


def build_world(world: World, runs: list[Run]) -> None:
    for run in runs:
        world.add_cluster(
            run.target,
            version="v1.32.2",
            control_plane_endpoint=f"cp.{run.target}.test:6443",
            nodes=[NodeSpec(f"{run.target}-cp", role="control-plane")],
        )
        for i in range(1, run.nodes + 1):
            world.add_cluster(
                run.source(i),
                version="v1.32.1",
                control_plane_endpoint=f"{run.source(i)}.test:6443",
                nodes=[NodeSpec(run.node(i), role="control-plane")],
            )


@dataclass(frozen=True)
class Outcome:
    seconds: float  # from the first start to the last end (planning excluded)
    peak: int  # most migrations seen running at once
    planning_requests: int  # API requests made before the start (rule checks, lookups)
    cpu: CpuShare | None = None  # where the CPU went while it ran (batches only)
    width: int = 1  # the migrations at once the batch ran with (its stored max_parallel)


Counter = Callable[[], int]  # API requests so far, over the run's clusters


def as_batch(
    settings: Settings,
    connection: redis.Redis,
    run: Run,
    requests: Counter,
    meter: CpuMeter | None = None,
) -> Outcome:
    """Plan, store as approved, start; wait for the batch's final event. With `meter`, also
    where the CPU went from the start to the end."""
    registry = ClusterRegistry(settings)
    nodes = [run.node(i) for i in range(1, run.nodes + 1)]
    plan = batches.plan_nodes(nodes, None, run.target, Role.WORKER, registry)
    if not plan.allowed:
        raise RuntimeError(batches.render(plan))
    batch = batches.create_batch(
        RequestStore(connection),
        plan,
        requester="UBENCH",
        decided_by="UBENCH",
        state=State.APPROVED,
    )
    planning = requests()
    if meter is not None:
        meter.start()
    started = time.perf_counter()
    enqueue_batch_advance(connection, batch.id)
    final = wait_final(connection, batch.id, BATCH_TIMEOUT)
    seconds = time.perf_counter() - started
    cpu = meter.stop() if meter is not None else None
    if final.state != str(State.SUCCEEDED):
        raise RuntimeError(f"batch {batch.id}: {final.text}")
    children = [c for c in batch.extra.get("children", "").split(",") if c]
    ended = RequestStore(connection).get(batch.id)
    width = parallelism.stored(ended.extra) if ended else None
    if width is None:
        raise RuntimeError(f"batch {batch.id}: no max_parallel stored on it")
    return Outcome(seconds, peak_concurrency(connection, children), planning, cpu, width)


def one_after_another(
    settings: Settings, connection: redis.Redis, run: Run, requests: Counter
) -> Outcome:
    """Check all first; then store, start and wait for each migration alone. Seconds from the
    first start to the last end. (A request is stored only when it starts: an approved request
    without a job would be picked up by the workers' recovery loop.)"""
    registry = ClusterRegistry(settings)
    store = RequestStore(connection)
    verdicts = []
    for i in range(1, run.nodes + 1):
        ask = MigrationAsk(run.node(i), run.source(i), run.target, Role.WORKER)
        verdict = check(ask, registry.get(ask.source), registry.get(ask.target))
        if not verdict.allowed:
            raise RuntimeError(f"{ask.node}: {[f.text for f in verdict.findings]}")
        verdicts.append(verdict)
    planning = requests()
    started = time.perf_counter()
    for verdict in verdicts:
        ask = verdict.ask
        request = store.create(
            Request(
                id="",
                node=ask.node,
                source=ask.source,
                target=ask.target,
                role=ask.role,
                state=State.APPROVED,
                requester="UBENCH",
                decided_by="UBENCH",
                destroys_source=verdict.destroys_source,
                from_control_plane=bool(verdict.node and verdict.node.is_control_plane),
            )
        )
        enqueue_migration(connection, settings, request.id)
        final = wait_final(connection, request.id, BATCH_TIMEOUT)
        if final.state != str(State.SUCCEEDED):
            raise RuntimeError(f"{request.node}: {final.text}")
    return Outcome(time.perf_counter() - started, 1, planning)


def peak_concurrency(connection: redis.Redis, batch_children: list[str]) -> int:
    """The most migrations running at once, from their first step start to their final event."""
    log = RedisEventLog(connection)
    points: list[tuple[float, int]] = []
    for child in batch_children:
        events = log.history(child)
        starts = [e.at for e in events if e.kind is EventKind.STEP_STARTED]
        ends = [e.at for e in events if e.is_final]
        if starts and ends:
            points += [(min(starts), 1), (max(ends), -1)]
    level = peak = 0
    for _, step in sorted(points):
        level += step
        peak = max(peak, level)
    return peak


def run(sizes: Sizes, url: str, footprint: Footprint) -> Result:
    batch_runs = [Run(n, sizes.nodes) for n in range(1, sizes.repeats + 1)]
    serial_runs = [Run(n, sizes.nodes) for n in range(sizes.repeats + 1, 2 * sizes.repeats + 1)]
    curve_runs = [Run(100 + k, n) for k, n in enumerate(sizes.curve)]
    # the curve's sizes from 16 up again with real joins' length (the workers know every cluster
    # from their start, so these are built with the others)
    real_runs = [
        Run(200 + k, n) for k, n in enumerate(sizes.curve) if n >= 16 and sizes.real_join_seconds
    ]
    connection = fresh_redis(url)
    with (
        World(join_seconds=sizes.join_seconds) as world,
        tempfile.TemporaryDirectory(prefix="bench-stitch-") as tmp,
    ):
        build_world(world, batch_runs + serial_runs + curve_runs + real_runs)
        directory = Path(tmp)
        config = write_config(world, directory, max_parallel=sizes.max_parallel)
        workers = [
            start_worker(config, url, directory / f"worker-{i}.log") for i in range(sizes.workers)
        ]
        samples: dict[str, list[Any]] = {
            f"{kind}_{what}": []
            for kind in ("batch", "serial")
            for what in ("seconds", "requests_per_node", "planning_requests_per_node")
        }
        samples["peak_concurrency"] = []
        samples["widths"] = []  # max_parallel each batch run used
        samples["curve_seconds"] = []  # [nodes, seconds] per curve run
        samples["batch_cpu"] = []  # CpuShare per batch run
        samples["curve_cpu"] = []  # [nodes, CpuShare] per curve run
        meter = CpuMeter(connection, [process.pid for process in workers])
        batch_measured = functools.partial(as_batch, meter=meter)
        try:
            wait_workers_ready(connection, sizes.workers)
            for process in workers:
                footprint.sample("worker", process.pid, idle=True)
            for kind, runs, how in (
                ("batch", batch_runs, batch_measured),
                ("serial", serial_runs, one_after_another),
            ):
                for stitch in runs:
                    clusters = stitch.clusters(world)
                    for cluster in clusters:
                        cluster.reset_requests()
                    # The operator's configuration: this run's clusters only (a node's source
                    # is looked up across all configured clusters).
                    settings = settings_for(
                        world, directory, url, stitch.cluster_names, max_parallel=sizes.max_parallel
                    )

                    def count(clusters: list[Cluster] = clusters) -> int:
                        return sum(len(c.requests) for c in clusters)

                    outcome = how(settings, connection, stitch, count)
                    samples[f"{kind}_seconds"].append(outcome.seconds)
                    samples[f"{kind}_requests_per_node"].append(count() / sizes.nodes)
                    samples[f"{kind}_planning_requests_per_node"].append(
                        outcome.planning_requests / sizes.nodes
                    )
                    if kind == "batch":
                        samples["peak_concurrency"].append(outcome.peak)
                        samples["widths"].append(outcome.width)
                        samples["batch_cpu"].append(asdict(outcome.cpu) if outcome.cpu else None)
                    _verify(world, stitch)
            for stitch in curve_runs:
                settings = settings_for(
                    world, directory, url, stitch.cluster_names, max_parallel=sizes.max_parallel
                )
                outcome = as_batch(settings, connection, stitch, lambda: 0, meter)
                samples["curve_seconds"].append([stitch.nodes, outcome.seconds, outcome.width])
                samples["curve_cpu"].append(
                    [stitch.nodes, asdict(outcome.cpu) if outcome.cpu else None]
                )
                _verify(world, stitch)
            samples["real_curve_seconds"] = _real_joins_curve(
                world, sizes, directory, url, connection, meter, real_runs
            )
            for process in workers:
                footprint.sample("worker", process.pid)
        finally:
            for process in workers:
                stop_process(process)
    connection.flushdb()
    return _result(sizes, samples)


def _real_joins_curve(
    world: World,
    sizes: Sizes,
    directory: Path,
    url: str,
    connection: redis.Redis,
    meter: CpuMeter,
    runs: list[Run],
) -> list[list[float]]:
    """[nodes, seconds] of `runs`, each join lasting `real_join_seconds`: how the batch scales
    when the joins, not these two cores, take the time."""
    world.join_seconds = sizes.real_join_seconds
    seconds = []
    try:
        for stitch in runs:
            settings = settings_for(
                world, directory, url, stitch.cluster_names, max_parallel=sizes.max_parallel
            )
            outcome = as_batch(settings, connection, stitch, lambda: 0, meter)
            seconds.append([float(stitch.nodes), outcome.seconds])
            _verify(world, stitch)
    finally:
        world.join_seconds = sizes.join_seconds
    return seconds


def _verify(world: World, stitch: Run) -> None:
    target = world.cluster(stitch.target)
    for i in range(1, stitch.nodes + 1):
        node = target.node(stitch.node(i))
        conditions = (node or {}).get("status", {}).get("conditions", [])
        if not any(c["type"] == "Ready" and c["status"] == "True" for c in conditions):
            raise RuntimeError(f"{stitch.node(i)} is not Ready in {stitch.target}")


def rounds(nodes: int, width: int) -> int:
    """How many rounds of `width` migrations at once a batch of `nodes` needs at best."""
    return math.ceil(nodes / width)


def ideal_seconds(nodes: int, width: int, serial_seconds: float) -> float:
    """The batch's floor: its rounds, each as long as one migration alone on these workers
    (`serial_seconds`: `nodes` migrations one after another)."""
    return rounds(nodes, width) * serial_seconds / nodes


def width_words(sizes: Sizes, width: int) -> str:
    """`max_parallel 16`, or `max_parallel auto (32)`: the setting and what it chose."""
    if isinstance(sizes.max_parallel, int):
        return f"max_parallel {width}"
    return f"max_parallel {sizes.max_parallel} ({width})"


def _result(sizes: Sizes, samples: dict[str, Any]) -> Result:
    ours, theirs = median(samples["batch_seconds"]), median(samples["serial_seconds"])
    n, width = sizes.nodes, max(samples["widths"])
    chose = width_words(sizes, width)
    per_node = theirs / n  # one migration alone, on these workers
    ideal = ideal_seconds(n, width, theirs)
    peak = max(samples["peak_concurrency"])
    planning = median(samples["batch_planning_requests_per_node"])
    serial_planning = median(samples["serial_planning_requests_per_node"])
    return Result(
        "stitch",
        "Stitch",
        params={
            "nodes": n,
            "join_seconds": sizes.join_seconds,
            "workers": sizes.workers,
            "max_parallel": sizes.max_parallel,
            "max_parallel_used": width,
            "repeats": sizes.repeats,
        },
        samples=samples,
        figures=[
            Figure(
                f"{n} single-node clusters into one as one batch, {sizes.join_seconds:g} s "
                f"joins (median of {sizes.repeats})",
                ours,
                "s",
                f"one after another: {theirs:.1f} s ({per_node:.2f} s each); ideal at "
                f"{chose}: {rounds(n, width)} rounds, {ideal:.1f} s",
                f"{ideal / ours:.0%} of ideal",
            ),
            Figure(
                "speed-up over one after another",
                theirs / ours,
                "x",
                f"ideal: {n / rounds(n, width):.0f}x ({sizes.workers} workers, {chose})",
                "",
            ),
            Figure(
                "most migrations running at once",
                peak,
                "",
                chose,
                _peak_words(peak, min(width, n)),
            ),
            Figure(
                "API requests per node, all clusters",
                median(samples["batch_requests_per_node"]),
                "requests",
                f"one after another: {median(samples['serial_requests_per_node']):.1f}; of "
                f"which planning: {planning:.1f} (batch, sources looked up by name) vs "
                f"{serial_planning:.1f}",
                "",
            ),
        ],
    )


def _peak_words(peak: int, most: int) -> str:
    """Whether the batch kept to its width (never above it; below it when the workers were
    too busy to start more before the first ended)."""
    if peak > most:
        return "MORE THAN CONFIGURED"
    return "as configured" if peak == most else "below it: the workers were busy"
