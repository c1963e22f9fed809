"""A real `joinops worker` for the CLI tests, started when a test says so."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from rq import Worker

from tests.support.clusters import write_config
from tests.support.engine import start_worker, stop_worker

StartWorker = Callable[[], subprocess.Popen[bytes]]


@pytest.fixture
def config(world, tmp_path, redis_client, redis_url, monkeypatch) -> Path:  # type: ignore[no-untyped-def]
    path = write_config(world, tmp_path)
    monkeypatch.setenv("JOINOPS_CONFIG", str(path))
    monkeypatch.setenv("REDIS_URL", redis_url)
    return path


@pytest.fixture
def start(config, tmp_path, redis_url, redis_client) -> Iterator[StartWorker]:  # type: ignore[no-untyped-def]
    """Start a worker and return once it listens on the queue; it is stopped after the test."""
    started: list[subprocess.Popen[bytes]] = []

    def go() -> subprocess.Popen[bytes]:
        started.append(start_worker(config, redis_url, tmp_path / f"worker{len(started)}.log"))
        deadline = time.monotonic() + 30
        while Worker.count(connection=redis_client) < len(started):  # registers as it listens
            assert started[-1].poll() is None, (tmp_path / "worker0.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "the worker did not start listening in 30 s"
            time.sleep(0.05)
        return started[-1]

    yield go
    for process in started:
        stop_worker(process)
