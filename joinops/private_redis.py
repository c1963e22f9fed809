"""A private `redis-server`: started on a free loopback port in a directory of its own, owned by
whoever started it, never a Redis a user runs.

The tests, the benchmarks and the sandbox each start one, so nothing they flush, stop or restart
can be a user's data. `PrivateRedis.restart()` is an operator's restart (SHUTDOWN, which
writes the append-only file, then the same port and directory again).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from joinops.children import ended_with_parent

START_TIMEOUT = 30.0  # seconds for redis-server to answer: generous for a loaded machine
STOP_TIMEOUT = 30.0  # seconds for it to exit after SHUTDOWN or SIGTERM


class RedisServerMissing(RuntimeError):
    """No `redis-server` on PATH."""


def redis_server_binary() -> str:
    binary = shutil.which("redis-server")
    if binary is None:
        raise RedisServerMissing(
            "redis-server is not installed: install it (Debian: apt-get install redis-server)"
        )
    return binary


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PrivateRedis:
    """One `redis-server` process, on 127.0.0.1 and a free port, with its files in `directory`.

    `durable=True` keeps an append-only file fsynced on every write (the fault tests restart it
    and expect everything back; the sandbox's next run may start on it); otherwise it keeps
    nothing on disk. `ends_with_parent=True`: the kernel stops it if this process is killed
    before it could (joinops/children.py); start it from the main thread then.
    """

    def __init__(
        self, directory: Path, durable: bool = False, ends_with_parent: bool = False
    ) -> None:
        self.directory = directory
        self.durable = durable
        self.ends_with_parent = ends_with_parent
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.binary = redis_server_binary()

    @property
    def url(self) -> str:
        return self.database_url(0)

    def database_url(self, database: int) -> str:
        return f"redis://127.0.0.1:{self.port}/{database}"

    def start(self) -> PrivateRedis:
        """Start it and wait until it answers; a port taken meanwhile is traded for another."""
        self.directory.mkdir(parents=True, exist_ok=True)
        for _ in range(5):
            with (self.directory / "redis.log").open("ab") as log:  # the child keeps its own
                self.process = subprocess.Popen(
                    self._argv(),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # a Ctrl-C at the terminal is for its owner to handle
                )
            if self._until_answering():
                return self
            self.port = free_port()  # it exited: another process took the port first
        raise RuntimeError(f"redis-server did not start: see {self.directory / 'redis.log'}")

    def shutdown(self) -> None:
        """SHUTDOWN, as an operator's restart does (an append-only file is written first)."""
        assert self.process is not None
        client = self.client(socket_timeout=STOP_TIMEOUT)
        try:
            client.shutdown()
        except redis.ConnectionError:
            pass  # it closes the connection as it goes
        finally:
            client.close()
        self.process.wait(timeout=STOP_TIMEOUT)

    def restart(self, down_seconds: float = 0.0) -> None:
        """Shut down, stay down `down_seconds` (the outage is the fault), start again."""
        self.shutdown()
        if down_seconds:
            time.sleep(down_seconds)
        self.start()

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it has not exited within STOP_TIMEOUT; safe to call twice."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=STOP_TIMEOUT)

    def answers(self) -> bool:
        client = self.client(socket_timeout=1)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    def client(self, socket_timeout: float) -> redis.Redis:
        """A client that tries once: redis-py's default retries would hide how long it took."""
        return redis.Redis(
            port=self.port, socket_timeout=socket_timeout, retry=Retry(NoBackoff(), 0)
        )

    def _argv(self) -> list[str]:
        persistence = (
            ["--appendonly", "yes", "--appendfsync", "always"]
            if self.durable
            else ["--appendonly", "no"]
        )
        argv = [
            self.binary,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.directory),
            "--save",
            "",
            "--daemonize",
            "no",
            *persistence,
        ]
        return ended_with_parent(argv) if self.ends_with_parent else argv

    def _until_answering(self) -> bool:
        """True once it answers, False if it exited first; it announces readiness only in its
        log, so the port is polled."""
        return _poll(self.answers, lambda: self.process is not None and self.process.poll() is None)


def _poll(ready: Callable[[], bool], alive: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if ready():
            return True
        if not alive():
            return False
        time.sleep(0.02)
    raise RuntimeError(f"redis-server did not answer within {START_TIMEOUT:.0f} s")
