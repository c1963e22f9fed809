"""`joinops migrate` at a terminal: one progress line redrawn in place; plain lines elsewhere."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import threading

from cli import main
from tests.cli.workers import config, start  # noqa: F401  (fixtures)

MIGRATE = ["migrate", "a-w-1", "--from", "clusterA", "--to", "clusterB", "--yes"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def add_replicated_pods(world, count: int = 3) -> None:  # type: ignore[no-untyped-def]
    for n in range(count):
        world.cluster("clusterA").add_pod(
            "a-w-1", f"web-{n}", owner_kind="ReplicaSet", owner_name="web"
        )


def run_in_a_terminal(args: list[str]) -> tuple[int, str]:
    """Run `joinops ARGS` with a pseudo-terminal as stdout and stderr; its exit code and output."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "cli", *args],
        stdin=subprocess.DEVNULL,
        stdout=terminal,
        stderr=terminal,
        env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "120"},
    )
    os.close(terminal)
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: the process closed the terminal
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    code = process.wait(timeout=120)
    reader.join(10)
    os.close(controller)
    return code, b"".join(chunks).decode(errors="replace")


def test_at_a_terminal_the_step_under_way_is_one_line_redrawn_in_place(world, start):  # noqa: F811
    add_replicated_pods(world)
    start()
    code, out = run_in_a_terminal(MIGRATE)
    assert code == 0, out
    assert "\x1b[2K" in out  # the live line is erased and drawn again, not appended
    screen = ANSI.sub("", out)
    assert re.search(r"5/8 drain · \d/3 pods gone · \d+:\d\d", screen), screen
    assert re.search(r"8/8 cleanup · \d+:\d\d", screen), screen
    assert "ok [drain]" in screen  # finished steps stay, as lines
    assert "SUCCEEDED: `a-w-1` moved from clusterA to clusterB" in screen
    assert "pods to move off" not in screen  # progress lives in the live line only


def test_without_a_terminal_every_event_is_a_plain_line(world, start, capsys):  # noqa: F811
    add_replicated_pods(world)
    start()
    assert main(MIGRATE) == 0
    out = capsys.readouterr().out
    assert not ANSI.search(out)
    assert "  [drain] 3 pods to move off a-w-1" in out
    assert ".. [drain]" in out and "ok [drain]" in out
    assert "SUCCEEDED: `a-w-1` moved from clusterA to clusterB" in out
