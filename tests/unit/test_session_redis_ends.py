"""A pytest killed outright takes its private redis-server with it (tests/support/session_redis.py).

Before, `timeout -s KILL pytest …` or an OOM kill left a redis-server running per killed test
process, found by hand later. The kernel's parent-death signal (util-linux setpriv --pdeathsig,
as the sandbox's Redis) ends it now; this test kills a real pytest and waits on the server's
pidfd for its exit.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parents[2]
HELD = "tests/support/held_session.py"


def _wait_for_file(path: Path, process: subprocess.Popen[bytes], timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while not path.exists() or not path.read_text():
        assert process.poll() is None, "the held pytest ended before it started its Redis"
        assert time.monotonic() < deadline, "the held pytest never started its Redis"
        time.sleep(0.05)
    return path.read_text()


def test_a_killed_test_session_takes_its_redis_server_with_it(tmp_path):
    held_at = tmp_path / "url"
    env = {k: v for k, v in os.environ.items() if k != "JOINOPS_TEST_REDIS_URL"}
    env["JOINOPS_HELD_AT"] = str(held_at)
    env["TMPDIR"] = str(tmp_path)  # the killed session cannot remove its server's directory
    session = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", HELD],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    server_pid = 0
    try:
        url = _wait_for_file(held_at, session)
        server_pid = int(redis.Redis.from_url(url).info("server")["process_id"])
        server = os.pidfd_open(server_pid)
        session.kill()
        session.wait()
        ended, _, _ = select.select([server], [], [], 30)
        os.close(server)
        assert ended, "the killed pytest's redis-server is still running"
    finally:
        if session.poll() is None:
            session.kill()
            session.wait()
        if server_pid:
            try:
                os.kill(server_pid, signal.SIGKILL)  # what the change is for, if it failed
            except ProcessLookupError:
                pass
