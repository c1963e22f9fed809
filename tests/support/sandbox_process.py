"""A `joinops sandbox` process as a user starts it, for the tests: what it printed (stdout line by
line as it came, stderr whole), the processes it started, and its stop by Ctrl-C."""

from __future__ import annotations

import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import psutil

EXIT_SECONDS = 60  # for a stopped sandbox to exit: generous for a machine ten times busier


class SandboxProcess:
    """`python -m cli sandbox ARGS` (or `command`) in `cwd`; `env` is added to this process's."""

    def __init__(
        self,
        cwd: Path,
        *args: str,
        env: dict[str, str] | None = None,
        command: Sequence[str] | None = None,
        new_session: bool = False,
    ) -> None:
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        self.process = subprocess.Popen(
            list(command or [sys.executable, "-m", "cli", "sandbox", *args]),
            cwd=cwd,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=new_session,  # a terminal's foreground group, for `interrupt_group`
        )
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        self.seen: list[tuple[float, str]] = []
        self._stderr: list[str] = []
        self._readers = [
            threading.Thread(target=self._read_out, name="sandbox-stdout", daemon=True),
            threading.Thread(target=self._read_err, name="sandbox-stderr", daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read_out(self) -> None:
        for line in self.process.stdout or []:
            self.lines.put((time.monotonic(), line.rstrip("\n")))

    def _read_err(self) -> None:
        self._stderr.extend(self.process.stderr or [])

    def wait_line(self, pattern: str, timeout: float = 120) -> tuple[float, re.Match[str]]:
        """The next printed line matching `pattern` (earlier lines are kept in `seen`)."""
        while True:
            try:
                at, line = self.lines.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no line matching {pattern!r}:\n{self.output()}") from None
            self.seen.append((at, line))
            found = re.search(pattern, line)
            if found:
                return at, found

    def output(self) -> str:
        return "\n".join(line for _, line in self.seen) + "\n" + self.stderr()

    def stderr(self) -> str:
        return "".join(self._stderr)

    def descendants(self) -> list[psutil.Process]:
        """What it started (and they started), alive now."""
        try:
            return psutil.Process(self.process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def interrupt(self) -> None:
        self.process.send_signal(signal.SIGINT)

    def interrupt_group(self) -> None:
        """Ctrl-C at a terminal: SIGINT to every process of the foreground group."""
        os.killpg(self.process.pid, signal.SIGINT)

    def wait(self) -> int:
        """Its exit status, once its output is read to the end."""
        try:
            code = self.process.wait(timeout=EXIT_SECONDS)
        except subprocess.TimeoutExpired:
            self.kill()
            message = f"not ended {EXIT_SECONDS} s after its stop:\n{self.output()}"
            raise AssertionError(message) from None
        for reader in self._readers:
            reader.join()
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return code

    def stop(self) -> int:
        """Ctrl-C, and its exit status."""
        if self.process.poll() is None:
            self.interrupt()
        return self.wait()

    def kill(self) -> None:
        """For a test already failing: nothing of it may outlive the test."""
        for child in self.descendants():
            try:
                child.kill()
            except psutil.NoSuchProcess:
                pass
        self.process.kill()
        self.process.wait()

    def sourced(self, env_file: Path) -> dict[str, str]:
        """Its environment with `. env_file` applied (the `export K=V` lines the sandbox wrote)."""
        exported = dict(self.env)
        for line in env_file.read_text().splitlines():
            if line.startswith("export "):
                key, _, value = line.removeprefix("export ").partition("=")
                exported[key] = shlex.split(value)[0]
        return exported


def still_running(processes: Sequence[psutil.Process]) -> list[str]:
    """Those of `processes` that have not ended (a zombie has: only its parent has not read its
    status), named for a failure message."""
    left = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                left.append(f"{process.pid}: {' '.join(process.cmdline())}")
        except psutil.NoSuchProcess:
            continue
    return left
