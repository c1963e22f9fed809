"""`joinops worker`'s log: readable lines at a terminal (time, level, request id, message), JSON
objects when its stderr is not one (a pipe, a file, a log collector), or as `--log-format` says.

The worker runs the sandbox's migrations (`joinops sandbox`, its own Redis, `. sandbox/env`), as
the README's terminal walk does; the terminal is a pseudo-terminal (the `pty` module), which is
what a terminal window gives a shell."""

from __future__ import annotations

import json
import os
import pty
import queue
import re
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from joinops import logs
from tests.support.sandbox_process import SandboxProcess

LINE_SECONDS = 120  # for the worker's line to come, on a loaded machine


class Worker:
    """`joinops worker` with its stdout and stderr on a terminal (`tty=True`) or a pipe."""

    def __init__(self, env: dict[str, str], tty: bool) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        if tty:
            reading, writing = pty.openpty()
            output: int = writing
        else:
            reading, output = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "cli", "worker"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
        )
        os.close(output)
        self._reading = reading
        self._reader = threading.Thread(target=self._read, name="worker-output", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self._reading, 65536)
            except OSError:  # a terminal's other side closed: EIO
                chunk = b""
            if not chunk:
                return
            *complete, buffer = (buffer + chunk).split(b"\n")
            for line in complete:
                self.lines.put(line.decode().rstrip("\r"))

    def wait_line(self, pattern: str) -> str:
        seen = []
        while True:
            try:
                line = self.lines.get(timeout=LINE_SECONDS)
            except queue.Empty:
                raise AssertionError(f"no line with {pattern!r}:\n" + "\n".join(seen)) from None
            seen.append(line)
            if re.search(pattern, line):
                return line

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)
        self._reader.join(60)
        os.close(self._reading)


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A terminal sandbox; yields the environment `. sandbox/env` gives another shell."""
    running = SandboxProcess(tmp_path, "--dir", "sb", "--arrival-seconds", "0")
    try:
        running.wait_line(r"^Press Ctrl-C to stop")
        yield running.sourced(tmp_path / "sb" / "env")
    finally:
        assert running.stop() == 0, running.output()


def migrate(env: dict[str, str], node: str, source: str, target: str) -> str:
    """`joinops migrate … --yes`, followed to its end; the request's id."""
    done = subprocess.run(
        [sys.executable, "-m", "cli", "migrate", node, "--from", source, "--to", target, "--yes"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    found = re.search(r"\b(req-[0-9a-f]{8})\b", done.stdout)
    assert found, done.stdout
    return found.group(1)


def test_the_worker_logs_readable_lines_at_a_terminal_and_json_objects_into_a_pipe(sandbox):
    worker = Worker(sandbox, tty=True)
    try:
        request = migrate(sandbox, "a-w-1", "clusterA", "clusterB")
        line = worker.wait_line(rf"{request} audit succeeded")
    finally:
        worker.stop()
    assert re.fullmatch(rf"\d\d:\d\d:\d\d INFO    {request} audit succeeded", line), line

    worker = Worker(sandbox, tty=False)
    try:
        request = migrate(sandbox, "a-w-1", "clusterB", "clusterA")
        line = worker.wait_line(rf'(?=.*"{request}")(?=.*"audit succeeded")')
    finally:
        worker.stop()
    entry: dict[str, Any] = json.loads(line)
    assert (entry["level"], entry["request_id"], entry["message"]) == (
        "INFO",
        request,
        "audit succeeded",
    )
    assert {"time", "logger"} <= set(entry)


def test_log_format_chosen_wins_over_what_stderr_is():
    master, terminal = pty.openpty()
    with os.fdopen(master, "rb"), os.fdopen(terminal, "w") as tty:
        assert logs.json_wanted(None, tty) is False
        assert logs.json_wanted("json", tty) is True
    with tempfile.TemporaryFile("w") as file:
        assert logs.json_wanted(None, file) is True
        assert logs.json_wanted("text", file) is False
