"""`joinops sandbox` starts and stops cleanly: a Redis of its own, started empty for each run
(unless --keep-state) and stopped with it; a busy page port refused in one line; Ctrl-C or
SIGTERM at any moment (while it starts, right after an approval while the migration runs)
leaves no process behind; no password in what it prints.

Every process the sandbox started is checked by pid once it has exited: a process this test
process did not reap must have ended (orphans would be re-parented to it: tests/support/
leftovers.py makes it the subreaper)."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.support import session_redis
from tests.support.sandbox_process import SandboxProcess, still_running

ROOT = Path(__file__).resolve().parents[2]
ALICE, BOB = "U0SANDREQ1", "U0SANDBOX1"
PASSWORD = "s3cret"
WAIT_SECONDS = 120  # for what the sandbox does on a loaded machine


@pytest.fixture
def sandboxes(tmp_path: Path) -> Iterator[Callable[..., SandboxProcess]]:
    """Starts `joinops sandbox --dir sb ARGS` in tmp_path; one a test left running is killed."""
    started: list[SandboxProcess] = []

    def start(*args: str, env: dict[str, str] | None = None) -> SandboxProcess:
        started.append(SandboxProcess(tmp_path, "--dir", "sb", *args, env=env))
        return started[-1]

    yield start
    for sandbox in started:
        if sandbox.process.poll() is None:
            sandbox.kill()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def joinops(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "cli", *args], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def started_since(moment: float) -> list[psutil.Process]:
    """This process's descendants started at `moment` or later (an orphan comes here)."""
    found = []
    for process in psutil.Process().children(recursive=True):
        try:
            if process.create_time() >= moment:
                found.append(process)
        except psutil.NoSuchProcess:
            continue
    return found


def until(
    found: Callable[[], Any], timeout: float = WAIT_SECONDS, why: Callable[[], str] = str
) -> Any:
    """`found()` once true, looked at every 0.1 s; `why()` says what was seen, if never."""
    deadline, pause = time.monotonic() + timeout, threading.Event()
    while not (result := found()):
        assert time.monotonic() < deadline, f"not within {timeout:g} s: {why()}"
        pause.wait(0.1)
    return result


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return json.load(answer)


def post(url: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)


def button(blocks: Any, action_id: str) -> dict[str, Any] | None:
    """The Block Kit element with `action_id` among `blocks`, at any depth."""
    if isinstance(blocks, dict):
        if blocks.get("action_id") == action_id:
            return blocks
        blocks = list(blocks.values())
    if isinstance(blocks, list):
        for item in blocks:
            if found := button(item, action_id):
                return found
    return None


def test_a_busy_page_port_is_named_with_the_flag_that_picks_another(sandboxes):
    moment = time.time()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        sandbox = sandboxes("--slack", "--port", str(port))
        code = sandbox.wait()
    assert code == 2
    assert sandbox.stderr().splitlines() == [
        f"joinops: port {port} on 127.0.0.1 is in use (another sandbox?): choose another with "
        f"--port N (0: any free port), e.g. `make sandbox SANDBOX_ARGS='--port {port + 1}'`"
    ]
    assert still_running(started_since(moment)) == []


def test_ctrl_c_right_after_an_approval_stops_the_bot_the_worker_and_its_redis(sandboxes):
    elsewhere = f"redis://:{PASSWORD}@127.0.0.1:{free_port()}/0"  # a real bot's: not the sandbox's
    sandbox = sandboxes(
        "--slack", "--port", "0", "--arrival-seconds", "0", env={"REDIS_URL": elsewhere}
    )
    _, page = sandbox.wait_line(r"Open its channel: (http://127\.0\.0\.1:\d+/)")
    sandbox.wait_line(
        r"^Redis: the sandbox's own, at redis://127\.0\.0\.1:\d+/0, empty .*; "
        r"REDIS_URL is left for a real bot"
    )
    started = sandbox.descendants()
    commands = [" ".join(p.cmdline()) for p in started]
    assert [c for c in commands if "redis-server" in c], commands
    assert [c for c in commands if "cli worker" in c], commands

    url = page.group(1)
    assert (
        post(f"{url}api/command", {"user": ALICE, "text": "a-w-1 from clusterA to clusterB"})[
            "status"
        ]
        == 200
    )

    def awaiting_approval() -> dict[str, Any] | None:
        messages = get(f"{url}api/state?user={BOB}")["messages"]
        return next((m for m in messages if button(m["blocks"], "join_approve")), None)

    request = until(awaiting_approval)
    approve = button(request["blocks"], "join_approve")
    assert approve is not None
    action = {"action_id": "join_approve", "value": approve["value"]}
    assert post(f"{url}api/click", {"user": BOB, "ts": request["ts"], "action": action}) == {
        "status": 200
    }

    def reported_in_its_thread() -> bool:  # the worker runs the migration
        messages = get(f"{url}api/state?user={BOB}")["messages"]
        return any(m["ts"] == request["ts"] and m["replies"] for m in messages)

    until(reported_in_its_thread)
    sandbox.interrupt()
    assert sandbox.wait() == 0, sandbox.output()
    assert "Traceback" not in sandbox.stderr(), sandbox.stderr()
    assert still_running(started) == []
    assert PASSWORD not in sandbox.output()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_while_it_starts_stops_what_it_started(sandboxes, signum):
    sandbox = sandboxes("--slack", "--port", "0")

    def its_redis_started() -> list[psutil.Process]:
        assert sandbox.process.poll() is None, sandbox.output()
        return [p for p in sandbox.descendants() if "redis" in p.name()]

    redis_server = until(
        its_redis_started, why=lambda: f"{sandbox.descendants()}\n{sandbox.output()}"
    )
    sandbox.process.send_signal(signum)
    assert sandbox.wait() == 0, sandbox.output()
    assert "Traceback" not in sandbox.stderr(), sandbox.stderr()
    assert still_running(redis_server + sandbox.descendants()) == []


def test_a_sandbox_killed_outright_takes_its_redis_and_its_worker_with_it(sandboxes):
    """SIGKILL: no code of the sandbox runs; the kernel sends its children SIGTERM."""
    sandbox = sandboxes("--slack", "--port", "0", "--arrival-seconds", "0")
    sandbox.wait_line(r"Open its channel: ")
    started = sandbox.descendants()
    assert len(started) >= 2, started  # redis-server and the worker
    sandbox.process.kill()
    assert sandbox.wait() == -signal.SIGKILL
    until(lambda: not still_running(started), why=lambda: str(still_running(started)))


def test_a_named_redis_that_does_not_answer_is_refused_without_its_password(sandboxes):
    port = free_port()
    sandbox = sandboxes("--redis-url", f"redis://:{PASSWORD}@127.0.0.1:{port}/0")
    assert sandbox.wait() == 2
    (line,) = sandbox.stderr().splitlines()
    assert line.startswith(
        f"joinops: --redis-url: nothing answers at redis://:***@127.0.0.1:{port}/0 ("
    )
    assert line.endswith("leave --redis-url out: the sandbox starts a Redis of its own")
    assert PASSWORD not in sandbox.output()


def test_a_named_redis_is_used_as_it_is(sandboxes, tmp_path, redis_client):
    redis_client.set("someone:else", "kept")
    sandbox = sandboxes("--redis-url", session_redis.url(), "--arrival-seconds", "0")
    sandbox.wait_line(r"^Redis: .*, named with --redis-url, used as it is \(nothing is flushed\)")
    env = sandbox.sourced(tmp_path / "sb" / "env")
    assert env["REDIS_URL"] == session_redis.url()
    assert "No active requests." in joinops(env, "list")
    assert sandbox.stop() == 0
    assert redis_client.get("someone:else") == b"kept"


def test_each_run_starts_empty_unless_asked_to_keep_the_last_runs_requests(sandboxes, tmp_path):
    env_file = tmp_path / "sb" / "env"
    first = sandboxes("--arrival-seconds", "0")
    first.wait_line(r"^Redis: the sandbox's own, at redis://127\.0\.0\.1:\d+/0, empty")
    first.wait_line(r"^Press Ctrl-C to stop")
    env = first.sourced(env_file)
    queued = joinops(
        env, "migrate", "a-w-1", "--from", "clusterA", "--to", "clusterB", "--yes", "--no-follow"
    )
    found = re.search(r"(req-[0-9a-f]{8})", queued)
    assert found, queued
    request_id = found.group(1)
    assert request_id in joinops(env, "list")  # approved, waiting for a worker
    assert first.stop() == 0

    kept = sandboxes("--arrival-seconds", "0", "--keep-state")
    kept.wait_line(r"^Redis: the sandbox's own, at .*, with what the last run left")
    kept.wait_line(r"^Press Ctrl-C to stop")
    assert request_id in joinops(kept.sourced(env_file), "list")
    assert kept.stop() == 0

    fresh = sandboxes("--arrival-seconds", "0")
    fresh.wait_line(r"^Redis: the sandbox's own, at .*, empty")
    fresh.wait_line(r"^Press Ctrl-C to stop")
    env = fresh.sourced(env_file)
    assert "No active requests." in joinops(env, "list")
    assert request_id not in joinops(env, "audit")
    assert fresh.stop() == 0


def test_make_sandbox_reaches_the_page_and_ctrl_c_stops_all_of_it(tmp_path):
    """`make sandbox` as the README's first command, in this checkout's venv; Ctrl-C at a
    terminal signals the whole foreground group (make, the sandbox)."""
    venv = Path(sys.executable).parent.parent
    options = f"--dir {tmp_path / 'sb'} --port 0 --arrival-seconds 0"
    make = SandboxProcess(
        ROOT,
        command=[
            "make",
            "--no-print-directory",
            "-o",
            f"{venv}/.installed",  # installed already: this test runs in it
            "sandbox",
            f"VENV={venv}",
            f"SANDBOX_ARGS={options}",
        ],
        new_session=True,
    )
    try:
        make.wait_line(r"Open its channel: http://127\.0\.0\.1:\d+/")
        started = make.descendants()
        assert [p for p in started if "redis" in p.name()], started
        make.interrupt_group()
        make.wait()
    finally:
        if make.process.poll() is None:
            make.kill()
    assert "Traceback" not in make.stderr(), make.stderr()
    assert still_running(started) == []
