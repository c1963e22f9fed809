"""A real `joinops worker` for the CLI tests, started when a test says so."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

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
def start(config, tmp_path, redis_url) -> Iterator[StartWorker]:  # type: ignore[no-untyped-def]
    """Start a worker (once); it is stopped after the test."""
    started: list[subprocess.Popen[bytes]] = []

    def go() -> subprocess.Popen[bytes]:
        started.append(start_worker(config, redis_url, tmp_path / f"worker{len(started)}.log"))
        return started[-1]

    yield go
    for process in started:
        stop_worker(process)
