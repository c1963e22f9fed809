"""`joinops sandbox`: its single-node hosts arrive in its hosts directory one by one, and with
`--slack` the bot announces each in the page's channel, where Move opens a request."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.sandbox_process import SandboxProcess

ALICE = "U0SANDREQ1"


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[..., SandboxProcess]]:
    """Sandboxes in tmp_path/sb, each on a Redis of its own (a shared one would let a sandbox
    still stopping change another test's keys); each is stopped by Ctrl-C, and must exit 0."""
    started: list[SandboxProcess] = []

    def go(*args: str) -> SandboxProcess:
        started.append(SandboxProcess(tmp_path, "--dir", "sb", *args))
        return started[-1]

    yield go
    for sandbox in started:
        assert sandbox.stop() == 0, sandbox.output()


def test_the_hosts_arrive_one_by_one_in_the_configured_hosts_directory(start, tmp_path):
    sandbox = start("--arrival-seconds", "0.5")
    sandbox.wait_line(r"^Simulated clusters are running: clusterA, clusterB")
    hosts = (tmp_path / "sb" / "hosts.d").resolve()
    line = r"^Host (host-\d) arrived: its kubeconfig is (.*)$"
    arrived = [sandbox.wait_line(line) for _ in range(3)]
    assert [m.group(1) for _, m in arrived] == ["host-1", "host-2", "host-3"]
    assert [m.group(2) for _, m in arrived] == [str(hosts / f"host-{n}.yaml") for n in (1, 2, 3)]
    times = [at for at, _ in arrived]
    assert all(later - earlier >= 0.45 for earlier, later in itertools.pairwise(times))
    sandbox.wait_line(r"^All 3 hosts have arrived in ")

    config = yaml.safe_load((tmp_path / "sb" / "joinops.yaml").read_text())
    assert sorted(config["clusters"]) == ["clusterA", "clusterB"]
    assert config["arrivals"] == {
        "directory": str(hosts),
        "propose": {"to": "clusterB", "as": "worker"},
        "poll": "1s",
    }
    env = sandbox.sourced(tmp_path / "sb" / "env")
    assert env["JOINOPS_CONFIG"] == str((tmp_path / "sb" / "joinops.yaml").resolve())
    listed = subprocess.run(
        [sys.executable, "-m", "cli", "arrivals"], env=env, capture_output=True, text=True
    )
    assert listed.returncode == 0, listed.stderr
    rows = [line.split() for line in listed.stdout.splitlines() if line.startswith("host-")]
    assert [(r[0], r[1], r[-2]) for r in rows] == [
        (f"host-{n}", f"host-{n}.yaml", "waiting") for n in (1, 2, 3)
    ]


def test_a_bad_arrival_pace_is_refused(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "cli", "sandbox", "--dir", "sb", "--arrival-seconds", "-1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "'-1' is not a number of seconds: use 0 or more" in done.stderr


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


def _post(url: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)


def _until(found: Callable[[], Any], timeout: float = 60) -> Any:
    deadline, pause = time.monotonic() + timeout, threading.Event()
    while not (result := found()):
        assert time.monotonic() < deadline, "not within the time"
        pause.wait(0.1)
    return result


def _texts(message: dict[str, Any]) -> str:
    return json.dumps(message["blocks"]) + message["text"]


def test_with_slack_each_host_is_announced_in_the_channel_and_move_opens_a_request(start):
    sandbox = start("--slack", "--web-port", "0", "--arrival-seconds", "0")
    _, page = sandbox.wait_line(r"Open its channel: (http://127\.0\.0\.1:\d+/)")
    url = page.group(1)

    def announced() -> list[dict[str, Any]]:
        messages = _get(f"{url}api/state?user={ALICE}")["messages"]
        shown = [m for m in messages if "A host arrived" in m["text"]]
        return shown if len(shown) == 3 else []

    messages = _until(announced)
    assert [m["text"] for m in messages] == [
        f"A host arrived: host-{n} (node node-{n})" for n in (1, 2, 3)
    ]
    first = messages[0]
    assert "Move into clusterB as worker" in _texts(first)
    action = {"action_id": "arrival_move", "value": "host-1"}
    assert _post(f"{url}api/click", {"user": ALICE, "ts": first["ts"], "action": action}) == {
        "status": 200
    }

    def requested() -> dict[str, Any] | None:
        messages = _get(f"{url}api/state?user={ALICE}")["messages"]
        return next((m for m in messages if "join_approve" in _texts(m)), None)

    request = _until(requested)
    assert "node-1" in _texts(request) and "clusterB" in _texts(request)
