"""A rolling restart of the bot under a steady stream of `/join`: every command answered 200,
every request message posted once, none lost.

Two real `joinops serve --http` replicas behind one port, replaced one after the other as the
chart's `RollingUpdate` with `maxUnavailable: 0` replaces them, while ten `/join` a second arrive
(bench/rolling.py has the whole scenario: the benchmark's row runs the same). The port stands
for the chart's Service: a new connection goes to a replica whose /readyz answers 200, as the
endpoints controller sends it, and a refused one to the next, as ingress-nginx does; right after
each SIGTERM one command goes straight to the stopping replica, as a Service that has not let go
of it yet sends it.
"""

from __future__ import annotations

from bench.rolling import DRAIN, LATE, NODES, RATE, SECONDS, SECRET, SPEED, restart_under_stream
from slacksim.server import SlackSim
from slacksim.tiers import Tiers
from tests.bot.served import served_env
from tests.support.clusters import write_config
from tests.support.engine import start_worker, stop_worker


def test_a_rolling_restart_under_ten_joins_a_second_loses_and_doubles_nothing(
    world, redis_url, tmp_path
):
    nodes = world.cluster("clusterA").add_nodes(NODES, prefix="r")
    world.cluster("clusterA").add_nodes(2, prefix=LATE)
    config = write_config(
        world,
        tmp_path,
        slack={"rate_scale": SPEED},
        policy={"max_open_requests_per_user": 10_000},
    )
    workers = [start_worker(config, redis_url, tmp_path / f"worker-{i}.log") for i in (1, 2)]
    try:
        with SlackSim(tiers=Tiers(SPEED)) as sim:
            env = served_env(config, sim, redis_url, SECRET)
            outcome = restart_under_stream(
                env, sim, nodes, tmp_path, rate=RATE, seconds=SECONDS, drain=DRAIN
            )
    finally:
        for worker in workers:
            stop_worker(worker)

    assert outcome.exit_codes == [0, 0]  # each stopped cleanly, its work finished
    assert outcome.sent >= RATE * SECONDS
    assert outcome.late == [200, 200]  # answered while the Service let go of the replica
    assert [n for n, status in outcome.statuses.items() if status != 200] == []
    assert outcome.lost(nodes) == []  # every command's request message posted…
    assert outcome.doubled(nodes) == []  # …once
    assert not any("restarted" in a or "went wrong" in a for a in outcome.answers)
    assert outcome.proxy_failed == 0
