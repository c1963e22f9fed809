"""What the image's smoke tests talk to, served from the host on loopback (scripts/image-smoke.sh).

Starts the sandbox's simulated clusters (`joinops sandbox`: kubesim over HTTPS) and a fake Slack
(slacksim), writes DIR/kubeconfig, DIR/joinops.yaml and DIR/slack.env (SLACK_* for the bot), prints
"ready" and serves until SIGTERM. The container, on the host's network, reaches them at 127.0.0.1.

    .venv/bin/python scripts/image_hosts.py DIR
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import threading
from pathlib import Path

import yaml

from cli.sandbox_cmd import SANDBOX_CLUSTERS
from kubesim import NodeSpec, World
from slacksim import SlackSim

SIGNING_SECRET = "image-smoke-signing-secret"  # a test value: the fake Slack signs nothing real


def add_sandbox_clusters(world: World) -> None:
    for name, (version, endpoint, nodes) in SANDBOX_CLUSTERS.items():
        world.add_cluster(
            name,
            version=version,
            control_plane_endpoint=endpoint,
            nodes=[NodeSpec(n, role=role, kubelet_version=kubelet) for n, role, kubelet in nodes],
        )


def write_files(directory: Path, world: World, slack: SlackSim) -> None:
    kubeconfig = directory / "kubeconfig"
    world.write_kubeconfig(kubeconfig)
    clusters = {name: {"kubeconfig": str(kubeconfig), "context": name} for name in SANDBOX_CLUSTERS}
    (directory / "joinops.yaml").write_text(
        yaml.safe_dump({"clusters": clusters, "approvers": ["U0SMOKE01"]}, sort_keys=False)
    )
    (directory / "slack.env").write_text(
        f"SLACK_BOT_TOKEN={slack.token}\n"
        f"SLACK_SIGNING_SECRET={SIGNING_SECRET}\n"
        f"SLACK_API_URL={slack.api_url}\n"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path, help="where to write the files the container reads")
    args = parser.parse_args()
    directory = args.dir.resolve()
    directory.mkdir(parents=True, exist_ok=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with World(pod_grace_seconds=1.0, join_seconds=3.0) as world, SlackSim() as slack:
        add_sandbox_clusters(world)
        write_files(directory, world, slack)
        print("ready", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
