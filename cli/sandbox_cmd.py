"""`joinops sandbox`: simulated clusters on loopback, to try joinops with no real cluster.

clusterA and clusterB are configured under `clusters:`; the single-node hosts arrive: their
kubeconfigs are written into the sandbox's `hosts.d` one by one (cli/sandbox_arrivals.py), the
directory of its `arrivals:`, so the bot announces each one as it comes."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import yaml

from cli import sandbox_arrivals

SANDBOX_CLUSTERS: dict[str, tuple[str, str, list[tuple[str, str, str | None]]]] = {
    # name: (version, control-plane endpoint, [(node, role, kubelet)])
    "clusterA": (
        "v1.31.4",
        "",
        [
            ("a-cp-1", "control-plane", None),
            ("a-w-1", "worker", None),
            ("a-w-2", "worker", "v1.30.9"),
        ],
    ),
    "clusterB": (
        "v1.32.2",
        "cluster-b.sandbox.test:6443",
        [("b-cp-1", "control-plane", None), ("b-w-1", "worker", None)],
    ),
    "host-1": ("v1.32.1", "host-1.sandbox.test:6443", [("node-1", "control-plane", None)]),
    "host-2": ("v1.31.6", "host-2.sandbox.test:6443", [("node-2", "control-plane", None)]),
    "host-3": ("v1.30.8", "host-3.sandbox.test:6443", [("node-3", "control-plane", None)]),
}
MEMBERS = ("clusterA", "clusterB")  # configured under `clusters:`
ARRIVING = ("host-1", "host-2", "host-3")  # written into hosts.d, one by one
ARRIVAL_SECONDS = 5.0


def register(sub: Any) -> None:
    p = sub.add_parser("sandbox", help="start simulated clusters on loopback and configure them")
    p.add_argument(
        "--dir",
        type=Path,
        default=Path("sandbox"),
        help="where to write kubeconfig and joinops.yaml (default ./sandbox)",
    )
    p.add_argument(
        "--slack",
        action="store_true",
        help="also run the bot over a simulated Slack, with a web page for its channel "
        "(needs Redis at REDIS_URL)",
    )
    p.add_argument(
        "--web-port",
        type=int,
        default=8000,
        metavar="N",
        help="with --slack: the page's port on 127.0.0.1 (default 8000; 0 picks a free one)",
    )
    p.add_argument(
        "--arrival-seconds",
        type=_seconds,
        default=ARRIVAL_SECONDS,
        metavar="N",
        help="seconds between two hosts arriving in the hosts directory "
        f"(default {ARRIVAL_SECONDS:g}; 0: all at once)",
    )
    p.set_defaults(run=run)


def _seconds(value: str) -> float:
    from cli import texts

    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:
        raise argparse.ArgumentTypeError(texts.bad_seconds(value))
    return seconds


def run(args: argparse.Namespace) -> int:
    from kubesim import NodeSpec, World

    interrupted = _stop_on_interrupt()

    args.dir.mkdir(parents=True, exist_ok=True)
    kubeconfig, config = args.dir / "kubeconfig", args.dir / "joinops.yaml"
    hosts = args.dir / sandbox_arrivals.HOSTS_DIR
    sandbox_arrivals.clear(hosts, ARRIVING)
    from cli import sandbox_workloads

    with World(pod_grace_seconds=1.0, join_seconds=3.0, pod_start_seconds=0.5) as world:
        for name, (version, endpoint, nodes) in SANDBOX_CLUSTERS.items():
            cluster = world.add_cluster(
                name,
                version=version,
                control_plane_endpoint=endpoint,
                nodes=[
                    NodeSpec(n, role=role, kubelet_version=kubelet) for n, role, kubelet in nodes
                ],
            )
            if name == "clusterA":
                with cluster.api_client() as api_client:
                    sandbox_workloads.create(api_client)
                    world.wait_for(lambda: sandbox_workloads.ready(api_client), timeout=30)
        world.write_kubeconfig(kubeconfig, only=MEMBERS)
        channel = _slack_channel() if args.slack else None
        config.write_text(
            yaml.safe_dump(
                {
                    "clusters": {
                        name: {"kubeconfig": str(kubeconfig.resolve()), "context": name}
                        for name in MEMBERS
                    },
                    "arrivals": sandbox_arrivals.config(hosts, channel),
                    "approvers": ["U0SANDBOX1"],
                    "timeouts": {"approval": "30m", "drain": "2m", "join": "2m"},
                    "policy": {"min_loan": "30s"},  # a trial loan comes back in a minute
                },
                sort_keys=False,
            )
        )
        arrivals = sandbox_arrivals.Arrivals(
            hosts,
            ARRIVING,
            lambda name, path: world.write_kubeconfig(path, only=[name]),
            args.arrival_seconds,
        )
        if args.slack:
            _serve_slack(config, args, arrivals, interrupted)
        else:
            print(_next_steps(config, hosts, args.arrival_seconds), flush=True)
            _run(arrivals, interrupted)
    return 0


def _next_steps(config: Path, hosts: Path, seconds: float) -> str:
    return (
        f"Simulated clusters are running: {', '.join(SANDBOX_CLUSTERS)}.\n"
        f"Hosts {', '.join(ARRIVING)} arrive in {hosts} {_pace(seconds)}.\n"
        f"In another shell:\n"
        f"  export JOINOPS_CONFIG={config.resolve()}\n"
        f"  joinops clusters\n"
        f"  joinops arrivals\n"
        f"  joinops plan a-w-1 --from clusterA --to clusterB\n"
        f"  joinops plan a-w-2 --from clusterA --to clusterB   # refused: a bare pod\n"
        f"  joinops plan a-cp-1 --from clusterA --to clusterB   # refused: last control plane\n"
        f"  joinops plan node-1 --from host-1 --to clusterB --as control-plane\n"
        f"Press Ctrl-C to stop."
    )


def _pace(seconds: float) -> str:
    return f"one every {seconds:g} s" if seconds else "all at once"


def _slack_channel() -> str:
    from cli import sandbox_slack

    return sandbox_slack.CHANNEL


def _serve_slack(
    config: Path, args: argparse.Namespace, arrivals: Any, interrupted: threading.Event
) -> None:
    from cli import sandbox_slack, texts
    from joinops.settings import Secrets

    redis_url = Secrets().redis_url
    log = args.dir / "worker.log"
    with sandbox_slack.slack_sandbox(config, redis_url, args.web_port, log) as url:
        print(texts.sandbox_slack_ready(url, config, log), flush=True)
        _run(arrivals, interrupted)
    # Everything is stopped in order above; a relay lane may still be inside a Slack call that
    # waits out a Retry-After against the simulated Slack now gone, and Python would wait for
    # it at exit. Its stream entry stays unacknowledged (the next relay delivers it), so leave.
    sys.stdout.flush()
    os._exit(0)


def _run(arrivals: Any, interrupted: threading.Event) -> None:
    """The hosts arrive while the sandbox runs; Ctrl-C (or SIGTERM) stops both."""
    arrivals.start()
    try:
        with contextlib.suppress(KeyboardInterrupt):
            interrupted.wait()
    finally:
        arrivals.stop()


def _stop_on_interrupt() -> threading.Event:
    """Set on Ctrl-C or SIGTERM, from the first moment: one that comes while the sandbox starts
    (after it printed its page's address, before it waits) stops it once started, instead of
    being lost. Both handlers are set: a process started in the background of a
    non-interactive shell inherits SIGINT ignored, and Python then never raises
    KeyboardInterrupt, so the sandbox would not stop."""
    interrupted = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: interrupted.set())
    return interrupted
