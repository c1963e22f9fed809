"""Shared fixtures: a real Redis (flushed around each test), simulated clusters, engine contexts.

Subdirectories may override `world` with clusters of their own.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import redis

from kubesim import World
from tests.support.clusters import add_standard_clusters, settings_for
from tests.support.engine import RecordingReporter
from workers import context
from workers.context import EngineContext

TEST_REDIS_URL = os.environ.get("JOINOPS_TEST_REDIS_URL", "redis://127.0.0.1:6379/9")


@pytest.fixture
def redis_url() -> str:
    return TEST_REDIS_URL


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


@pytest.fixture
def world() -> Iterator[World]:
    with World(pod_grace_seconds=0.05, join_seconds=0.1) as w:
        yield add_standard_clusters(w)


@pytest.fixture
def make_ctx(world, tmp_path, redis_client, redis_url):  # type: ignore[no-untyped-def]
    """An engine context on the simulated world; timeouts can be overridden per test."""

    def make(hooks=None, **overrides) -> EngineContext:  # type: ignore[no-untyped-def]
        settings = settings_for(world, tmp_path, redis_url=redis_url, **overrides)
        ctx = EngineContext.from_settings(settings)
        ctx.reporter = RecordingReporter(ctx.redis, hooks)
        context.install(ctx)
        return ctx

    yield make
    context.install(None)
