"""The README's "Run it" commands, run as written (as subprocesses), succeed: the sandbox
starts, and a-w-1 moves from clusterA to clusterB although its web pods sit under a budget."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import redis

from tests.support import session_redis

ROOT = Path(__file__).resolve().parents[2]
JOINOPS = str(Path(sys.executable).with_name("joinops"))
STOP_SECONDS = 60  # SIGTERM to exit, on a machine ten times busier than an idle one


def readme_commands() -> list[str]:
    """Shell lines of the code blocks in the README's "Run it" section, comments dropped."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Run it", 1)[1].split("\n## ", 1)[0]
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", section, re.S):
        for line in block.splitlines():
            command = line.split(" #", 1)[0].strip()
            if command:
                lines.append(command)
    return lines


def argv(command: str, cwd: Path) -> list[str]:
    words = shlex.split(command.replace("$PWD", str(cwd)))
    return [JOINOPS if w == ".venv/bin/joinops" else w for w in words]


def stop(process: subprocess.Popen[str]) -> str | None:
    """SIGTERM, as a supervisor would; a process still running a minute later is killed, and
    what it was is returned for the test to fail on."""
    process.terminate()
    try:
        process.wait(timeout=STOP_SECONDS)
        return None
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return f"{process.args} did not stop within {STOP_SECONDS} s of SIGTERM"


def test_readme_sandbox_commands_move_a_node(tmp_path: Path) -> None:
    commands = readme_commands()
    assert commands[0] == "make install"  # done already: this suite runs in that .venv
    assert commands[1].startswith("redis-server")  # so is Redis: JOINOPS_session_redis.url()
    slack = ".venv/bin/joinops sandbox --slack"
    assert slack in commands  # tests/sandbox/test_sandbox_slack_browser.py drives that one
    commands = [commands[0], *(c for c in commands[2:] if c != slack)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "REDIS_URL": session_redis.url()}
    redis.Redis.from_url(session_redis.url()).flushdb()
    background: list[subprocess.Popen[str]] = []
    results: dict[str, subprocess.CompletedProcess[str]] = {}
    try:
        for command in commands[1:]:
            if command.startswith("export "):
                key, _, value = command.removeprefix("export ").partition("=")
                env[key] = value.replace("$PWD", str(tmp_path))
            elif command.endswith(" sandbox"):
                sandbox = subprocess.Popen(
                    argv(command, tmp_path),
                    cwd=tmp_path,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                )
                background.append(sandbox)
                assert sandbox.stdout is not None
                assert sandbox.stdout.readline().startswith("Simulated clusters are running")
            elif command.endswith("&"):
                background.append(
                    subprocess.Popen(
                        argv(command.rstrip("& "), tmp_path),
                        cwd=tmp_path,
                        env=env,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                        text=True,
                    )
                )
            else:
                done = subprocess.run(
                    argv(command, tmp_path),
                    cwd=tmp_path,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
                assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
                results[command] = done
    finally:
        unstopped = [stop(process) for process in reversed(background)]
    assert not any(unstopped), unstopped
    migrate = next(r for c, r in results.items() if " migrate a-w-1 " in c)
    assert "ALLOWED: move a-w-1 from clusterA to clusterB" in migrate.stdout
    assert "[drain] `a-w-1` drained" in migrate.stdout
    assert "SUCCEEDED: `a-w-1` moved from clusterA to clusterB" in migrate.stdout
