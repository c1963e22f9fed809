"""`joinops sandbox`: simulated clusters on loopback, to try joinops with no real cluster."""

from __future__ import annotations

import argparse
import contextlib
import signal
import threading
from pathlib import Path
from typing import Any

import yaml

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
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from kubesim import NodeSpec, World

    args.dir.mkdir(parents=True, exist_ok=True)
    kubeconfig, config = args.dir / "kubeconfig", args.dir / "joinops.yaml"
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
        world.write_kubeconfig(kubeconfig)
        config.write_text(
            yaml.safe_dump(
                {
                    "clusters": {
                        name: {"kubeconfig": str(kubeconfig.resolve()), "context": name}
                        for name in SANDBOX_CLUSTERS
                    },
                    "approvers": ["U0SANDBOX1"],
                    "timeouts": {"approval": "30m", "drain": "2m", "join": "2m"},
                    "policy": {"min_loan": "30s"},  # a trial loan comes back in a minute
                },
                sort_keys=False,
            )
        )
        if args.slack:
            _serve_slack(config, args)
        else:
            print(_next_steps(config), flush=True)
            _wait_for_interrupt()
    return 0


def _next_steps(config: Path) -> str:
    return (
        f"Simulated clusters are running: {', '.join(SANDBOX_CLUSTERS)}.\n"
        f"In another shell:\n"
        f"  export JOINOPS_CONFIG={config.resolve()}\n"
        f"  joinops clusters\n"
        f"  joinops plan a-w-1 --from clusterA --to clusterB\n"
        f"  joinops plan a-w-2 --from clusterA --to clusterB   # refused: a bare pod\n"
        f"  joinops plan a-cp-1 --from clusterA --to clusterB   # refused: last control plane\n"
        f"  joinops plan node-1 --from host-1 --to clusterB --as control-plane\n"
        f"Press Ctrl-C to stop."
    )


def _serve_slack(config: Path, args: argparse.Namespace) -> None:
    from cli import sandbox_slack, texts
    from joinops.settings import Secrets

    redis_url = Secrets().redis_url
    log = args.dir / "worker.log"
    with sandbox_slack.slack_sandbox(config, redis_url, args.web_port, log) as url:
        print(texts.sandbox_slack_ready(url, config, log), flush=True)
        _wait_for_interrupt()


def _wait_for_interrupt() -> None:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with contextlib.suppress(KeyboardInterrupt):
        stop.wait()
