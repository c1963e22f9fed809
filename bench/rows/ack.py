"""Rows: acks of `joinops serve --http` against a bare bolt app on the same server."""

from __future__ import annotations

import importlib.util

from bench import ack, rolling
from bench.report import Result, Row, Target, make_row
from bench.support import Env, median

NAME = "ack"
FULL = ack.Sizes(commands=500, concurrency=25, rounds=3, warmup=50, single=50)
QUICK = ack.Sizes(commands=100, concurrency=10, rounds=1, warmup=10, single=10)
P99_RATIO = 1.25  # joinops's p99 ack at most this many times the bare bolt app's (issue 16)
CPU_MS = 3.0  # bot CPU per valid /join (issue 16)
OURS = ("joinops", "joinops_help", "joinops_2_replicas")
FLOORS = ("bolt_floor", "bolt_floor_2_replicas")
RATE = 150.0  # valid /join acked per second by one bot process (issue 16), p99 under 500 ms


def blocked() -> str | None:
    """Why the ack benchmark cannot run yet, if it cannot."""
    for module in ("bot.serve", "cli.serve_cmd"):
        if importlib.util.find_spec(module) is None:
            return f"{module} does not exist yet: `joinops serve --http` cannot run"
    return None


def row(env: Env) -> Result:
    why = blocked()
    if why is not None:
        return Result(NAME, "Ack latency", status="blocked", note=why)
    sizes = QUICK if env.quick else FULL
    result = ack.run(sizes, env.redis_url, env.footprint)
    samples = result.samples

    def med(key: str, field: str) -> float:
        return median(r[field] for r in samples[key])

    def loader(key: str) -> str:
        """The sending process's busiest round: near 1.0 it, not the server, set the pace."""
        return f"at most {max(r['loader_busy'] for r in samples[key]):.0%}"

    errors = sum(r["errors"] for key in OURS for r in samples[key])
    floor_errors = sum(r["errors"] for key in FLOORS for r in samples[key])
    result.rows += [
        make_row(
            f"p99 ack, {sizes.commands} valid /join, {sizes.concurrency} at once, "
            "2 replicas behind one port",
            med("joinops_2_replicas", "p99_ms"),
            "ms",
            "2 bare bolt apps behind the same proxy",
            med("bolt_floor_2_replicas", "p99_ms"),
            target=Target("ratio", "<=", P99_RATIO),
            note="the work after each ack runs in the replicas' post-ack processes; rounds "
            f"alternate with the floor's; the sender used {loader('joinops_2_replicas')} of a "
            "core",
        ),
        make_row(
            f"p99 ack, {sizes.commands} valid /join, {sizes.concurrency} at once, one replica",
            med("joinops", "p99_ms"),
            "ms",
            "bare bolt app",
            med("bolt_floor", "p99_ms"),
            target=Target("ratio", "<=", P99_RATIO),
            # measured in the same run: the acks alone
            note=f"rounds alternate with the floor's; the sender used {loader('joinops')} "
            f"of a core; `/join help` (no work after its ack) has p99 "
            f"{med('joinops_help', 'p99_ms'):.1f} ms, "
            f"{med('joinops_help', 'p99_ms') / med('bolt_floor', 'p99_ms'):.2f}x",
        ),
        make_row(
            "answers other than HTTP 200",
            errors,
            "requests",
            "bare bolt app",
            floor_errors,
            target=Target("joinops", "<=", 0, "requests"),
        ),
        make_row(
            f"valid /join acked per second, {sizes.concurrency} at once "
            f"(p99 {med('joinops', 'p99_ms'):.0f} ms: "
            f"{'under' if med('joinops', 'p99_ms') < 500 else 'OVER'} 500 ms)",
            median(sizes.commands / r["seconds"] for r in samples["joinops"]),
            "/s",
            "bare bolt app",
            median(sizes.commands / r["seconds"] for r in samples["bolt_floor"]),
            target=Target("joinops", ">=", RATE, "/s"),
        ),
        make_row(
            "bot CPU per valid /join",
            med("joinops", "cpu_ms_per_command"),
            "ms",
            "bare bolt app",
            med("bolt_floor", "cpu_ms_per_command"),
            target=Target("joinops", "<=", CPU_MS, "ms"),
            note=f"both processes; the acking one's share "
            f"{med('joinops', 'ack_cpu_ms_per_command'):.1f} ms "
            f"(`/join help`: {med('joinops_help', 'cpu_ms_per_command'):.1f} ms); the rest "
            "is the post-ack process's work, whose parts docs/benchmarks.md measures",
        ),
    ]
    result.rows += rolling_rows(env)
    return result


def rolling_rows(env: Env) -> list[Row]:
    """A rolling restart of both replicas under a steady stream of `/join` (bench/rolling.py)."""
    outcome, nodes, params = rolling.run(env.redis_url, env.quick)
    under = f"{params['rate']:g} /join a second for {outcome.seconds:.0f} s, {outcome.sent} sent"
    return [
        make_row(
            f"rolling restart of 2 replicas, {under}: answers other than HTTP 200",
            outcome.not_200,
            "requests",
            "Recreate (the chart before)",
            None,
            target=Target("joinops", "<=", 0, "requests"),
            note=f"{len(outcome.late)} of them sent straight to a stopping replica; exits "
            f"{outcome.exit_codes}",
        ),
        make_row(
            f"rolling restart of 2 replicas, {under}: request messages posted twice or lost",
            len(outcome.doubled(nodes)) + len(outcome.lost(nodes)),
            "requests",
            "",
            None,
            target=Target("joinops", "<=", 0, "requests"),
            note=f"twice: {len(outcome.doubled(nodes))}, lost: {len(outcome.lost(nodes))} "
            f"{outcome.why_lost(nodes)}".strip(),
        ),
    ]
