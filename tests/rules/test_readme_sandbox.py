"""The README's "Run it" commands, run as written (as subprocesses), succeed: the sandbox
starts with a Redis of its own, the worker runs in a second shell, and a-w-1 moves from clusterA
to clusterB although its web pods sit under a budget.

`make sandbox` is tests/sandbox/test_sandbox_lifecycle.py's, `make test` is this suite."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

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


def sourced(env: dict[str, str], env_file: Path) -> dict[str, str]:
    """`env` with `. env_file` applied: the `export K=V` lines the sandbox wrote."""
    exported = dict(env)
    for line in env_file.read_text().splitlines():
        if line.startswith("export "):
            key, _, value = line.removeprefix("export ").partition("=")
            exported[key] = shlex.split(value)[0]
    return exported


def test_readme_starts_with_the_two_commands_and_make_sandbox_runs_the_slack_sandbox() -> None:
    commands = readme_commands()
    assert commands[:2] == ["make sandbox", "make test"]
    assert not [c for c in commands if c.startswith("redis-server")]  # the sandbox has its own
    recipe = subprocess.run(
        # under `make test` this make is a sub-make: it would also print the directories
        ["make", "--no-print-directory", "-n", "-o", ".venv/.installed", "sandbox"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert recipe.returncode == 0, recipe.stderr
    assert [line.split() for line in recipe.stdout.splitlines()[-2:]] == [
        ["scripts/system-tools.sh", "redis-server"],
        [".venv/bin/joinops", "sandbox", "--slack"],
    ]


def test_readme_sandbox_commands_move_a_node(tmp_path: Path) -> None:
    commands = [c for c in readme_commands() if not c.startswith("make ")]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("REDIS_URL", None)
    background: list[subprocess.Popen[str]] = []
    results: dict[str, subprocess.CompletedProcess[str]] = {}
    try:
        for command in commands:
            if command.startswith(". "):
                env = sourced(env, tmp_path / command.removeprefix(". "))
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
                printed = [sandbox.stdout.readline()]
                assert printed[0].startswith("Simulated clusters are running"), printed
                while not printed[-1].startswith("Press Ctrl-C"):  # its env file is written
                    printed.append(sandbox.stdout.readline())
                    assert printed[-1], "".join(printed)  # it ended
            elif command.endswith(" worker"):  # a second shell's, left running
                background.append(
                    subprocess.Popen(
                        argv(command, tmp_path),
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
