"""Rows: the relay's Slack calls per migration (alone, 25 at once) and per 16-node batch, the
thread notifications per migration, the slowest thread's lag behind the engine with 25 at once,
and the 429s met, against slacksim enforcing Slack's rate tiers."""

from __future__ import annotations

from bench import relay
from bench.report import Result, Target, make_row
from bench.support import Env

NAME = "relay"
FULL = relay.Sizes(concurrent=25, batch=16)
QUICK = relay.Sizes(concurrent=4, batch=4)
PEER = "what a user reads (messages, thread lines and their edits, two root updates each)"


def row(env: Env) -> Result:
    sizes = QUICK if env.quick else FULL
    result = relay.run(sizes, env.redis_url)
    spends = result.samples
    cases = (
        ("alone", "one migration: Slack calls"),
        ("together", f"{sizes.concurrent} migrations at once: Slack calls per migration"),
        ("batch", f"a {sizes.batch}-node batch: Slack calls"),
    )
    for key, name in cases:
        spend = spends[key]
        per = 1 if key == "batch" else spend["requests"]
        result.rows.append(
            make_row(name, spend["total"] / per, "calls", PEER, spend["floor"] / per)
        )
    steps_and_outcome = 9  # a one-node migration: a reply per step (8) and the outcome
    for key, name in cases[:2]:
        spend = spends[key]
        result.rows.append(
            make_row(
                name.replace("Slack calls", "thread notifications"),
                spend["notifications"] / spend["requests"],
                "replies",
                "one reply per step and the outcome (edits notify nobody)",
                steps_and_outcome,
                target=Target("joinops", "<=", steps_and_outcome, "replies"),
            )
        )
    result.rows.append(
        make_row(
            f"{sizes.concurrent} migrations at once: a thread's last line after the engine's end",
            max(spends["together"]["lags"]),
            "s",
            f"the slowest of the {sizes.concurrent} threads (tiers x{relay.SPEED:g})",
            None,
            target=Target("joinops", "<=", 10.0, "s"),
        )
    )
    limited = sum(spend["limited"] for spend in spends.values())
    result.rows.append(
        make_row(
            "429s met by the bot in all three",
            limited,
            "calls",
            "none: the bot keeps under the tiers",
            0,
            target=Target("joinops", "<=", 0, "calls"),
        )
    )
    return result
