"""`joinops serve --post-ack-priority`: the post-ack process steps back from the acks in the
kernel's scheduler (bot/post_ack_priority.py). What is checked is what Linux's scheduler holds
for each thread of the served bot's post-ack process (sched_getscheduler, getpriority): the
policy the acks are put first by, not a log line about it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from cli import main
from slacksim.server import SlackSim
from tests.bot.harness import until
from tests.bot.served import STOP_SECONDS, free_port, healthy, served_env
from tests.support.clusters import write_config


@contextmanager
def post_ack_process(
    config: Path, sim: SlackSim, redis_url: str, log: Path, *priority: str
) -> Iterator[tuple[int, int]]:
    """`joinops serve --http [--post-ack-priority P]` running: (its pid, its post-ack one's),
    once the post-ack process says it runs (its priority is set before that line). In a
    session of its own, as a pod's container is a group of its own: the kernel weighs the
    post-ack process against the acks only, not against this test run's busy workers."""
    port = free_port()
    env = served_env(config, sim, redis_url)
    args = ["serve", "--http", "--host", "127.0.0.1", "--port", str(port), *priority]
    served = subprocess.Popen(
        [sys.executable, "-m", "cli", *args],
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        until(lambda: healthy(f"http://127.0.0.1:{port}/healthz") or served.poll() is not None, 60)
        until(lambda: " running (" in log.read_text() or served.poll() is not None, 60)
        assert served.poll() is None, log.read_text()
        children = Path(f"/proc/{served.pid}/task/{served.pid}/children").read_text().split()
        yield served.pid, int(children[0])
    finally:
        served.terminate()
        served.wait(STOP_SECONDS)


def threads(pid: int) -> list[int]:
    return [int(task.name) for task in Path(f"/proc/{pid}/task").iterdir()]


def test_idle_puts_every_thread_of_the_post_ack_process_in_sched_idle(
    world, sim, redis_url, tmp_path
):
    """As the chart runs it: the work after the acks gets only the CPU the acks leave."""
    config = write_config(world, tmp_path)
    with post_ack_process(
        config, sim, redis_url, tmp_path / "serve.log", "--post-ack-priority", "idle"
    ) as (acking, post_ack):
        assert os.sched_getscheduler(acking) == os.SCHED_OTHER  # the acks keep theirs
        assert {os.sched_getscheduler(tid) for tid in threads(post_ack)} == {os.SCHED_IDLE}
    assert "running (SCHED_IDLE)" in (tmp_path / "serve.log").read_text()


def test_by_default_the_post_ack_process_is_ten_nicer_than_the_acks(
    world, sim, redis_url, tmp_path
):
    """Where the bot shares its scheduling group with other busy work (a terminal's session,
    a test suite's workers), `idle` could wait for seconds: the default is a niceness."""
    config = write_config(world, tmp_path)
    with post_ack_process(config, sim, redis_url, tmp_path / "serve.log") as (acking, post_ack):
        acks = os.getpriority(os.PRIO_PROCESS, acking)
        nicer = {os.getpriority(os.PRIO_PROCESS, tid) for tid in threads(post_ack)}
        assert nicer == {min(19, acks + 10)}
        assert {os.sched_getscheduler(tid) for tid in threads(post_ack)} == {os.SCHED_OTHER}


@pytest.mark.parametrize("priority", ["-1", "20", "low", "1.5", ""])
def test_a_priority_that_is_neither_idle_nor_a_niceness_is_refused(priority, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["serve", "--post-ack-priority", priority])
    assert stopped.value.code == 2
    assert "use idle, or a niceness from 0 to 19" in capsys.readouterr().err
