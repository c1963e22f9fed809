"""Ctrl-C at `joinops migrate` is a decision: before the point of no return it cancels the
request (as `joinops cancel` does); after it, it says the move continues, where, and how to
follow it. A real `joinops migrate` process gets a real SIGINT, as a terminal's Ctrl-C sends
to the foreground process."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cli import main
from cli.follow import follow
from joinops.requests.lifecycle import State
from joinops.requests.store import RequestStore
from kubesim.behaviours import static_pods
from tests.cli.workers import start  # noqa: F401  (fixture)
from tests.support.clusters import write_config

MIGRATE = ["migrate", "a-w-1", "--from", "clusterA", "--to", "clusterB", "--yes"]
MOVE_NO_FOLLOW = [*MIGRATE, "--no-follow"]
LINE_SECONDS = 120  # the longest a line is awaited, on a machine ten times busier than idle


class Migrate:
    """`joinops ARGS` as a process, its output read line by line as it comes."""

    def __init__(self, args: list[str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "cli", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.lines: list[str] = []
        self._new: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._new.put(line.rstrip("\n"))
        self._new.put(None)

    def line(self, pattern: str) -> re.Match[str]:
        """The next line that matches `pattern` (a regex), waiting for it."""
        while True:
            try:
                line = self._new.get(timeout=LINE_SECONDS)
            except queue.Empty:
                raise AssertionError(f"no line like {pattern!r}: {self.lines}") from None
            if line is None:
                raise AssertionError(f"ended without a line like {pattern!r}: {self.lines}")
            self.lines.append(line)
            found = re.search(pattern, line)
            if found:
                return found

    def ctrl_c(self) -> None:
        self.process.send_signal(signal.SIGINT)

    def exit_code(self) -> int:
        """Once it has ended; every line it printed is then in `lines`."""
        code = self.process.wait(timeout=LINE_SECONDS)
        self._reader.join(LINE_SECONDS)
        while (line := self._new.get_nowait()) is not None:
            self.lines.append(line)
        return code

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=LINE_SECONDS)
        self._reader.join(LINE_SECONDS)


@pytest.fixture
def migrate() -> Iterator[Callable[[list[str]], Migrate]]:
    made: list[Migrate] = []

    def run(args: list[str]) -> Migrate:
        made.append(Migrate(args))
        return made[-1]

    yield run
    for process in made:
        process.close()


@pytest.fixture
def config(world, tmp_path, redis_client, redis_url, monkeypatch) -> Path:  # type: ignore[no-untyped-def]
    """A join may take its time here: a test holds it (`join`, well past any test's length)."""
    path = write_config(world, tmp_path, timeouts={"join": "10m"})
    monkeypatch.setenv("JOINOPS_CONFIG", str(path))
    monkeypatch.setenv("REDIS_URL", redis_url)
    return path


def queued(process: Migrate) -> str:
    return process.line(r"Request (req-[0-9a-f]{8}) queued\.").group(1)


def test_ctrl_c_before_a_worker_takes_it_cancels_the_request(world, config, migrate, redis_client):
    cli = migrate(MIGRATE)  # no worker runs: the request waits, approved
    request_id = queued(cli)
    cli.ctrl_c()
    said = cli.line(r"^Ctrl-C: ").string
    assert cli.exit_code() == 130
    assert said == f"Ctrl-C: Cancelled `{request_id}` before it started: nothing was changed."
    assert RequestStore(redis_client).get(request_id).state is State.CANCELLED
    a = world.cluster("clusterA")
    assert a.node("a-w-1") is not None and not a.node("a-w-1")["spec"].get("unschedulable")
    assert world.cluster("clusterB").node("a-w-1") is None


def test_ctrl_c_before_a_worker_takes_a_batch_cancels_every_node(world, config, migrate):
    cli = migrate(["migrate", "a-w-1", "a-w-2", "--from", "clusterA", "--to", "clusterB", "--yes"])
    batch_id = queued(cli)
    cli.ctrl_c()
    said = cli.line(r"^Ctrl-C: ").string
    assert cli.exit_code() == 130
    assert said.startswith(f"Ctrl-C: Cancelling `{batch_id}`: 2 nodes not yet past the point")
    assert f"`joinops status {batch_id}`" in said
    store_says = subprocess.run(
        [sys.executable, "-m", "cli", "status", batch_id], capture_output=True, text=True
    ).stdout
    assert store_says.count("CANCELLED: `a-w-") == 2, store_says


def test_ctrl_c_past_the_point_of_no_return_says_the_move_continues(
    world,
    config,
    start,  # noqa: F811
    migrate,
    redis_client,
    capsys,
):
    """A control plane's move is held once the node is Ready in the target, its control-plane
    phase not yet run (kubeadm's control-plane-join phase comes after the kubelet starts): the
    node agent ran long before, the move can only go on."""
    b = world.cluster("clusterB")
    b.api_server_port = 7443
    static_pods.add_control_plane_pods(b, b.host_of("b-cp-1"), ready=True)
    world.hold_control_plane_phase()
    start()
    cli = migrate(
        [
            "migrate",
            "a-cp-3",
            "--from",
            "clusterA",
            "--to",
            "clusterB",
            "--as",
            "control-plane",
            "--yes",
        ]
    )
    try:
        request_id = queued(cli)
        cli.line(r"\[wait-joined\] `a-cp-3` is Ready in clusterB; waiting for its control plane")
        cli.ctrl_c()
        said = cli.line(r"^Ctrl-C: ").string
        cli.line(r"Ctrl-C again leaves at once")
        cli.ctrl_c()
        assert cli.exit_code() == 130
    finally:
        world.hold_control_plane_phase(False)
    assert said == (
        f"Ctrl-C: Too late to cancel `{request_id}`: `a-cp-3` is past the point of no return "
        "(its node agent has started), so its move to clusterB continues, now at step 7/8 "
        f"wait-joined. `joinops status {request_id}` shows where it is."
    )
    assert cli.lines[-1] == said  # the second Ctrl-C left at once, with the same words
    assert follow(redis_client, request_id) == 0  # and the move went on to its end
    assert "SUCCEEDED: `a-cp-3` moved from clusterA to clusterB" in capsys.readouterr().out
    assert world.cluster("clusterB").node("a-cp-3") is not None
    assert main(["cancel", request_id]) == 1  # said in words, with when
    said = capsys.readouterr().out
    assert re.match(rf"Request `{request_id}` already succeeded at \d{{4}}-\d\d-\d\d ", said)
    assert said.rstrip().endswith(": there is nothing to cancel.")


def test_ctrl_c_at_retry_before_a_worker_takes_it_cancels_the_retry(
    world, config, migrate, redis_client
):
    """`joinops retry` follows its request as `joinops migrate` does, Ctrl-C included."""
    first = migrate(MOVE_NO_FOLLOW)
    request_id = queued(first)
    assert first.exit_code() == 0
    store = RequestStore(redis_client)
    assert store.transition(request_id, State.FAILED, outcome="the check failed")[0]  # as a worker

    cli = migrate(["retry", request_id])  # no worker runs: the retried request waits, approved
    cli.line(rf"Retrying {request_id}")
    cli.ctrl_c()
    said = cli.line(r"^Ctrl-C: ").string
    assert cli.exit_code() == 130
    assert said == f"Ctrl-C: Cancelled `{request_id}` before it started: nothing was changed."
    assert store.get(request_id).state is State.CANCELLED
    assert world.cluster("clusterB").node("a-w-1") is None
