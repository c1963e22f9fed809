"""Ack latency with two replicas behind one port, as the chart deploys the bot.

Two `joinops serve --http` processes (each with its post-ack process), and in front of them
`bench.proxy` in a process of its own: each new connection to the next replica, round robin, as
a Service spreads them. The bare bolt app is measured the same way — two of them behind the same
kind of proxy — so the proxy's own cost is on both sides of the ratio.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.support import start_process, stop_process

REPLICAS = 2
# as the chart runs the bot (values.yaml: bot.postAckPriority): the work after the acks in
# SCHED_IDLE, yielding to the acks within the bot's group (here its session, in a pod its cgroup)
POST_ACK_PRIORITY = "idle"


def serve_args(port: int) -> list[str]:
    """`joinops serve` over HTTP on `port`, as the chart starts it."""
    http = ["serve", "--http", "--host", "127.0.0.1", "--port", str(port)]
    return [*http, "--post-ack-priority", POST_ACK_PRIORITY]


def behind_one_port(
    measure: Callable[[str, list[int]], Any],
    env: dict[str, str],
    directory: Path,
    free_port: Callable[[], int],
    wait_ready: Callable[[str, Any, Path], None],
    *,
    floor: bool,
) -> Any:
    """Start REPLICAS servers (joinops, or with `floor` the bare bolt app) and the proxy, then
    `measure(events_url, pids)`; what it returns is returned. Everything is stopped after."""
    started = []
    try:
        ports = []
        for number in range(REPLICAS):
            port = free_port()
            log = directory / f"{'floor' if floor else 'bot'}-replica-{number}.log"
            if floor:
                process = start_process(["--port", str(port)], log, env, module="bench.bolt_floor")
                ready = f"http://127.0.0.1:{port}/"
            else:
                process = start_process(serve_args(port), log, env)
                ready = f"http://127.0.0.1:{port}/healthz"
            started.append(process)
            wait_ready(ready, process, log)
            ports.append(port)
        port = free_port()
        backends = [f"127.0.0.1:{p}" for p in ports]
        proxy_log = directory / f"proxy-{'floor' if floor else 'bot'}.log"
        proxy = start_process(["--port", str(port), *backends], proxy_log, module="bench.proxy")
        started.append(proxy)
        wait_ready(f"http://127.0.0.1:{port}/", proxy, proxy_log)
        return measure(f"http://127.0.0.1:{port}/slack/events", [p.pid for p in started[:-1]])
    finally:
        for process in started:
            stop_process(process)
