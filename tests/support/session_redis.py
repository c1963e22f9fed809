"""The tests' Redis: a private `redis-server` per test process, never a user's.

Each pytest process (each xdist worker too) starts its own `redis-server` on a free port before
collecting and stops it at the end, so tests flush, block and fill it without touching a Redis
anyone else uses, and parallel workers never flush each other's keys. Its URL is exported as
JOINOPS_TEST_REDIS_URL for the subprocesses the tests start.

JOINOPS_TEST_REDIS_URL set by the user names a database the tests may flush instead (no server is
started): the one way to point the tests at a Redis of one's own, and only explicitly.

A pytest killed outright (SIGKILL, an OOM kill, `timeout -s KILL`) cannot stop its server: the
kernel does (`ends_with_parent`, joinops/children.py), as the sandbox's. That ties the server to
the thread that starts it, so it is only asked for from the main thread, where pytest and
pytest-xdist's workers (execnet's main_thread_only model) configure.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from pathlib import Path

import pytest

from joinops.private_redis import PrivateRedis, RedisServerMissing

ENV = "JOINOPS_TEST_REDIS_URL"
DATABASE = 9  # the tests' database on their own server

_server: PrivateRedis | None = None


def url() -> str:
    """The tests' Redis database (flushed around each test that uses it)."""
    return os.environ[ENV]


def pytest_configure(config: pytest.Config) -> None:
    global _server
    if os.environ.get(ENV) or _is_xdist_controller(config):
        return
    directory = Path(tempfile.mkdtemp(prefix="joinops-test-redis-"))
    try:
        main_thread = threading.current_thread() is threading.main_thread()
        _server = PrivateRedis(directory, ends_with_parent=main_thread).start()
    except RedisServerMissing as missing:
        pytest.exit(f"{missing}; or set {ENV} to a Redis database the tests may flush", 2)
    os.environ[ENV] = _server.database_url(DATABASE)


def pytest_unconfigure(config: pytest.Config) -> None:
    global _server
    if _server is not None:
        _server.stop()
        shutil.rmtree(_server.directory, ignore_errors=True)
        os.environ.pop(ENV, None)
        _server = None


def _is_xdist_controller(config: pytest.Config) -> bool:
    """The xdist controller runs no test: only its workers need a server."""
    workers = getattr(config.option, "numprocesses", None)
    return bool(workers) and not hasattr(config, "workerinput")
