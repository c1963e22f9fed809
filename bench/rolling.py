"""A rolling restart of two bot replicas under a steady stream of `/join`: what Slack saw.

Two real `joinops serve --http` replicas (each with its post-ack process) behind one port
(`bench.proxy`: a new connection goes to the next replica whose /readyz answers 200, as the
endpoints controller sends it; a refused one to the next, as ingress-nginx does). While `rate`
`/join` a second arrive, each naming a node of its own, each replica is replaced as the chart's
`RollingUpdate` with `maxUnavailable: 0` replaces it: a new one started and ready first, then the
old one sent SIGTERM — not ready, answering for `--drain-seconds`, then finishing its requests
and its post-ack jobs. Right after each SIGTERM one more `/join` goes straight to the stopping
replica, as a Service slow to let go of it would send. Used by the benchmark's row and by
tests/bot/test_rolling_restart.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.ack import free_port
from bench.proxy import Backend, RoundRobinProxy, answers_200
from bench.support import message_text
from slacksim.server import SlackSim
from slacksim.signing import CHANNEL_ID, deliver, slash_command_body

SECRET = "rolling-signing-secret"
RATE = 10.0  # /join a second (the benchmark's)
SECONDS = 15.0  # of the stream, at least
NODES = 400  # one per command
DRAIN = 2.0  # --drain-seconds of the replicas
SPEED = 1000.0  # Slack's tiers this much faster: ten request messages a second in one channel
REQUESTER = "U0USER0001"
START_TIMEOUT = 60.0  # seconds a replica may take to be ready
STOP_TIMEOUT = 150.0  # seconds a replica may take to stop
POSTED_TIMEOUT = 300.0  # seconds for every request message after the stream
LATE = "late"  # the prefix of the nodes sent straight to a stopping replica


@dataclass
class Outcome:
    sent: int = 0  # commands of the stream
    statuses: dict[int, int] = field(default_factory=dict)  # command -> HTTP status (0: none)
    late: list[int] = field(default_factory=list)  # statuses of those sent to a stopping one
    exit_codes: list[int] = field(default_factory=list)  # of the replicas stopped
    posted: Counter[str] = field(default_factory=Counter)  # node -> request messages naming it
    responses: dict[str, list[str]] = field(default_factory=dict)  # response id -> answers
    proxy_failed: int = 0  # connections no ready replica took
    seconds: float = 0.0  # of the stream

    @property
    def not_200(self) -> int:
        return sum(s != 200 for s in self.statuses.values()) + sum(s != 200 for s in self.late)

    def asked(self, nodes: list[str]) -> list[str]:
        """The nodes of the commands sent: the stream's, then those sent to stopping ones."""
        return [*nodes[: self.sent], *self.late_nodes()]

    def lost(self, nodes: list[str]) -> list[str]:
        return [n for n in self.asked(nodes) if not self.posted[n]]

    def doubled(self, nodes: list[str]) -> list[str]:
        return [n for n in self.asked(nodes) if self.posted[n] > 1]

    @property
    def answers(self) -> list[str]:
        return [answer for answers in self.responses.values() for answer in answers]

    def why_lost(self, nodes: list[str]) -> str:
        """The first lost command's node and what its person was answered, for the report."""
        lost = self.lost(nodes)
        if not lost:
            return ""
        node = lost[0]
        rid = f"cmd-{nodes.index(node)}" if node in nodes else f"{LATE}-{int(node[-1]) - 1}"
        return f"{node}: {self.responses.get(rid, [])}"

    def late_nodes(self) -> list[str]:
        return [f"{LATE}-{n + 1}" for n in range(len(self.late))]


class Replica:
    """One `joinops serve --http` replica with its probes."""

    def __init__(self, env: dict[str, str], log: Path, drain: float) -> None:
        port, health = free_port(), free_port()
        self.log = log
        args = ["--port", str(port), "--health-port", str(health), "--drain-seconds", str(drain)]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "cli", "serve", "--http", "--host", "127.0.0.1", *args],
            env=env,
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its post-ack process in its group: `kill` takes both
        )
        self.backend = Backend("127.0.0.1", port, f"http://127.0.0.1:{health}/readyz")
        self.url = f"http://127.0.0.1:{port}/slack/events"

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while not answers_200(self.backend.ready_url or ""):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"replica not ready: {self.log.read_text()[-2000:]}")
            time.sleep(0.05)

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)


class Stream:
    """`/join NODE from clusterA to clusterB`, `rate` a second, each node once, on a thread."""

    def __init__(self, url: str, sim: SlackSim, nodes: list[str], rate: float) -> None:
        self.url, self.sim, self.nodes, self.rate = url, sim, nodes, rate
        self.statuses: dict[int, int] = {}
        self.sent = 0
        self.started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="join-stream")
        self._thread.start()

    def finish(self, at_least: float) -> None:
        self._stop.wait(max(0.0, self.started + at_least - time.monotonic()))
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        with ThreadPoolExecutor(16, thread_name_prefix="join-sender") as senders:
            due = time.monotonic()
            for number, node in enumerate(self.nodes):
                if self._stop.wait(max(0.0, due - time.monotonic())):
                    break
                senders.submit(self._send, number, node)
                self.sent = number + 1
                due += 1 / self.rate

    def _send(self, number: int, node: str) -> None:
        self.statuses[number] = send(self.url, self.sim, f"cmd-{number}", node)


def send(url: str, sim: SlackSim, rid: str, node: str) -> int:
    """`/join NODE from clusterA to clusterB` signed and posted to `url`: the HTTP status."""
    response_url = sim.response_url(rid, channel=CHANNEL_ID, user=REQUESTER)
    body = slash_command_body(text=f"{node} from clusterA to clusterB", response_url=response_url)
    try:
        return deliver(url, body, SECRET, timeout=30).status
    except OSError:
        return 0


def restart_under_stream(
    env: dict[str, str],
    sim: SlackSim,
    nodes: list[str],
    directory: Path,
    *,
    rate: float,
    seconds: float,
    drain: float,
) -> Outcome:
    """Run the stream through two replicas, restart both, wait for every request message.
    `env`: the replicas' environment, SLACK_SIGNING_SECRET set to `SECRET`; `nodes`: at least
    `rate * seconds` of clusterA's, and two named `late-1`, `late-2` too."""
    outcome = Outcome()
    replicas = [Replica(env, directory / f"bot-{name}.log", drain) for name in "ab"]
    proxy = RoundRobinProxy([r.backend for r in replicas])
    stream: Stream | None = None
    try:
        for replica in replicas:
            replica.wait_ready()
        proxy.start()
        stream = Stream(proxy.url + "/slack/events", sim, nodes, rate)
        _wait(lambda: stream is not None and stream.sent >= 2 * rate)
        for number, old in enumerate(list(replicas)):
            new = Replica(env, directory / f"bot-new-{number}.log", drain)
            replicas.append(new)
            new.wait_ready()
            proxy.add(new.backend)
            _wait(lambda backend=new.backend: backend.ready)
            old.process.send_signal(signal.SIGTERM)
            outcome.late.append(send(old.url, sim, f"{LATE}-{number}", f"{LATE}-{number + 1}"))
            outcome.exit_codes.append(old.process.wait(STOP_TIMEOUT))
            proxy.remove(old.backend)
        stream.finish(seconds)
        outcome.seconds = time.monotonic() - stream.started
        outcome.sent = stream.sent
        asked = outcome.asked(nodes)
        try:  # every command's request message, or what is missing at the timeout
            sim.wait_for(lambda: all(posted(sim)[n] for n in asked), POSTED_TIMEOUT)
        except TimeoutError:
            pass
        _wait(lambda: stream is not None and len(stream.statuses) == outcome.sent)
        outcome.statuses = dict(stream.statuses)
    finally:
        if stream is not None:
            stream.finish(0)
        proxy.stop()
        for replica in replicas:
            replica.kill()
    outcome.posted = posted(sim)
    outcome.proxy_failed = proxy.failed
    outcome.responses = {
        rid: [message_text(body) for body in bodies] for rid, bodies in sim.response_urls.items()
    }
    return outcome


def run(url: str, quick: bool) -> tuple[Outcome, list[str], dict[str, Any]]:
    """The benchmark's run: simulated clusters and Slack, two workers, the stream, both
    replicas restarted. Returns the outcome, the stream's nodes and the parameters."""
    from bench.support import fresh_redis, start_worker, stop_process, write_config
    from kubesim import NodeSpec, World
    from slacksim.tiers import Tiers

    params = {"rate": RATE, "seconds": 5.0 if quick else SECONDS, "drain_seconds": DRAIN}
    with (
        World() as world,
        SlackSim(tiers=Tiers(SPEED)) as sim,
        tempfile.TemporaryDirectory(prefix="bench-rolling-") as tmp,
    ):
        source = world.add_cluster(
            "clusterA",
            version="v1.31.4",
            control_plane_endpoint="cp.a.test:6443",
            nodes=[NodeSpec("a-cp-1", role="control-plane")],
        )
        nodes = source.add_nodes(NODES, prefix="r")
        source.add_nodes(2, prefix=LATE)
        world.add_cluster(
            "clusterB",
            version="v1.32.2",
            control_plane_endpoint="cp.b.test:6443",
            nodes=[NodeSpec("b-cp-1", role="control-plane")],
        )
        directory = Path(tmp)
        connection = fresh_redis(url)
        config = write_config(
            world,
            directory,
            policy={"max_open_requests_per_user": 10_000},
            slack={"rate_scale": SPEED},
        )
        env = {
            **os.environ,
            "JOINOPS_CONFIG": str(config),
            "REDIS_URL": url,
            "SLACK_BOT_TOKEN": sim.token,
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": sim.api_url,
        }
        env.pop("SLACK_APP_TOKEN", None)
        workers = [start_worker(config, url, directory / f"worker-{i}.log") for i in (1, 2)]
        try:
            outcome = restart_under_stream(
                env, sim, nodes, directory, rate=RATE, seconds=params["seconds"], drain=DRAIN
            )
        finally:
            for worker in workers:
                stop_process(worker)
        connection.flushdb()
    return outcome, nodes, params


def posted(sim: SlackSim) -> Counter[str]:
    """How many request messages (those with buttons) name each node."""
    found: Counter[str] = Counter()
    for message in sim.messages(CHANNEL_ID).values():
        if any(block.get("type") == "actions" for block in message.get("blocks") or []):
            found.update({w for w in message_text(message).split("`")[1::2] if "-" in w})
    return found


def _wait(predicate: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"not met within {timeout:.0f} s")
        time.sleep(0.01)
