"""`joinops sandbox`: simulated clusters on loopback, to try joinops with no real cluster.

clusterA and clusterB are configured under `clusters:`; the single-node hosts arrive: their
kubeconfigs are written into the sandbox's `hosts.d` one by one (cli/sandbox_arrivals.py), the
directory of its `arrivals:`, so the bot announces each one as it comes. Its Redis is its own
(cli/sandbox_redis.py); DIR/env tells another shell where the sandbox's configuration and Redis
are.

Ctrl-C or SIGTERM, at any moment, start-up included, stops everything it started (its Redis,
with --slack the bot, the page and the worker process) and exits 0; a problem it can name (a
busy port, no redis-server) is one line and exit 2. It leaves with os._exit once all is
stopped: a relay lane may still be inside a Slack call waiting out a Retry-After against the
simulated Slack now gone, and Python would wait for it at exit.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import yaml

from cli import sandbox_arrivals, sandbox_texts
from joinops.errors import ConfigError, UsageError

if TYPE_CHECKING:
    from cli.sandbox_redis import SandboxRedis

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
ENV_FILE = "env"  # `. sandbox/env`: JOINOPS_CONFIG and REDIS_URL of the running sandbox


def register(sub: Any) -> None:
    p = sub.add_parser("sandbox", help="start simulated clusters on loopback and configure them")
    p.add_argument(
        "--dir",
        type=Path,
        default=Path("sandbox"),
        help="where to write kubeconfig, joinops.yaml and env, and keep its Redis "
        "(default ./sandbox)",
    )
    p.add_argument(
        "--slack",
        action="store_true",
        help="also run the bot over a simulated Slack, with a web page for its channel, "
        "and a worker",
    )
    p.add_argument(
        "--port",
        "--web-port",
        dest="port",
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
    p.add_argument(
        "--keep-state",
        action="store_true",
        help="start the sandbox's Redis on what the last run left (requests, audit) instead of "
        "empty; the simulated clusters always start afresh",
    )
    p.add_argument(
        "--redis-url",
        metavar="URL",
        help="keep requests in this Redis database, as it is (never flushed), instead of a "
        "redis-server of the sandbox's own; REDIS_URL is not read",
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
    stop = _Stop()
    try:
        code = _sandbox(args, stop)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM while it started: all is stopped already
        code = 0
    except (ConfigError, UsageError) as e:
        print(f"joinops: {e}", file=sys.stderr)
        code = 2
    except Exception:  # a bug: its traceback, and still nothing left running
        traceback.print_exc()
        code = 1
    _leave(code)


def _sandbox(args: argparse.Namespace, stop: _Stop) -> int:
    from cli.sandbox_redis import sandbox_redis
    from kubesim import World

    if args.slack:
        from cli import sandbox_slack

        sandbox_slack.check_port_free(args.port)
    args.dir.mkdir(parents=True, exist_ok=True)
    hosts = args.dir / sandbox_arrivals.HOSTS_DIR
    sandbox_arrivals.clear(hosts, ARRIVING)
    with (
        sandbox_redis(args.dir, args.redis_url, args.keep_state) as store,
        World(pod_grace_seconds=1.0, join_seconds=3.0, pod_start_seconds=0.5) as world,
    ):
        config = _configure(world, args.dir, hosts, store, args.slack)
        arrivals = sandbox_arrivals.Arrivals(
            hosts,
            ARRIVING,
            lambda name, path: world.write_kubeconfig(path, only=[name]),
            args.arrival_seconds,
        )
        redis_line = sandbox_texts.redis_in_use(
            store.shown, store.own, store.kept, bool(os.environ.get("REDIS_URL"))
        )
        if args.slack:
            _serve_slack(config, args, store, arrivals, redis_line, stop)
        else:
            pace = sandbox_texts.arrival_pace(hosts, args.arrival_seconds)
            clusters, arriving = list(SANDBOX_CLUSTERS), list(ARRIVING)
            steps = sandbox_texts.next_steps(clusters, arriving, pace, redis_line, _env(args))
            print(steps, flush=True)
            _run(arrivals, stop)
    return 0


def _configure(world: Any, directory: Path, hosts: Path, store: SandboxRedis, slack: bool) -> Path:
    """The clusters, their kubeconfig, joinops.yaml, and DIR/env for another shell."""
    from cli import sandbox_workloads
    from kubesim import NodeSpec

    kubeconfig, config = directory / "kubeconfig", directory / "joinops.yaml"
    for name, (version, endpoint, nodes) in SANDBOX_CLUSTERS.items():
        cluster = world.add_cluster(
            name,
            version=version,
            control_plane_endpoint=endpoint,
            nodes=[NodeSpec(n, role=role, kubelet_version=kubelet) for n, role, kubelet in nodes],
        )
        if name == "clusterA":
            with cluster.api_client() as api_client:
                sandbox_workloads.create(api_client)
                world.wait_for(lambda: sandbox_workloads.ready(api_client), timeout=30)
    world.write_kubeconfig(kubeconfig, only=MEMBERS)
    channel = _slack_channel() if slack else None
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
    _write_private(directory / ENV_FILE, sandbox_texts.env_file(config, store.url))
    return config


def _env(args: argparse.Namespace) -> Path:
    return Path(args.dir) / ENV_FILE


def _write_private(path: Path, text: str) -> None:
    """Readable by its owner only: a Redis URL named with --redis-url may hold a password."""
    path.unlink(missing_ok=True)
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as file:
        file.write(text)


def _slack_channel() -> str:
    from cli import sandbox_slack

    return sandbox_slack.CHANNEL


def _serve_slack(
    config: Path,
    args: argparse.Namespace,
    store: SandboxRedis,
    arrivals: Any,
    redis_line: str,
    stop: _Stop,
) -> None:
    from cli import sandbox_slack

    log = args.dir / "worker.log"
    fresh = not args.keep_state
    with sandbox_slack.slack_sandbox(config, store.url, args.port, log, fresh) as url:
        print(sandbox_texts.slack_ready(url, log, redis_line, _env(args)), flush=True)
        _run(arrivals, stop)


def _run(arrivals: Any, stop: _Stop) -> None:
    """The hosts arrive while the sandbox runs; Ctrl-C (or SIGTERM) stops both."""
    arrivals.start()
    try:
        stop.started()
        stop.requested.wait()
    finally:
        arrivals.stop()


class _Stop:
    """Ctrl-C or SIGTERM, handled from the first moment. While the sandbox starts, the first one
    raises KeyboardInterrupt at once, so the start-up unwinds and stops what it started; once
    started, it sets `requested`, which the main thread waits on. Later ones change nothing:
    the stopping is never interrupted. Both handlers are set: a process started in the
    background of a non-interactive shell inherits SIGINT ignored, and would never stop."""

    def __init__(self) -> None:
        self.requested = threading.Event()
        self._starting = True
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._handle)
        self._unraisable = sys.unraisablehook
        sys.unraisablehook = self._unraisable_interrupt

    def _unraisable_interrupt(self, unraisable: Any) -> None:
        """The KeyboardInterrupt can land where Python cannot raise it (a weakref callback of the
        import machinery, a __del__): Python then prints it as a traceback and carries on. The
        stop is recorded already, so the start-up ends and the sandbox stops at once: no
        traceback for the user to read."""
        if isinstance(unraisable.exc_value, KeyboardInterrupt) and self.requested.is_set():
            return
        self._unraisable(unraisable)

    def started(self) -> None:
        self._starting = False

    def _handle(self, *_: object) -> None:
        first = not self.requested.is_set()
        self.requested.set()
        if first and self._starting:
            raise KeyboardInterrupt


def _leave(code: int) -> NoReturn:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
