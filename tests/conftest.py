"""Shared fixtures: a real Redis (private to this test process, flushed around each test),
simulated clusters, engine contexts; and the check that nothing outlives its test.

Subdirectories may override `world` with clusters of their own.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.register_assert_rewrite("tests.support")  # its helpers assert; its plugins load below

import redis  # noqa: E402

from joinops import metrics  # noqa: E402
from kubesim import World  # noqa: E402
from tests.support import session_redis  # noqa: E402
from tests.support.clusters import add_standard_clusters, settings_for  # noqa: E402
from tests.support.engine import RecordingReporter  # noqa: E402
from workers import context  # noqa: E402
from workers.context import EngineContext  # noqa: E402

pytest_plugins = ["tests.support.session_redis", "tests.support.leftovers", "pytester"]


@pytest.fixture
def redis_url() -> str:
    return session_redis.url()


@pytest.fixture(autouse=True)
def metrics_per_test() -> None:
    """The process-wide Prometheus counters start empty for each test: what a test reads of
    them is what it did."""
    for family in (metrics.TRANSITIONS, metrics.KUBE_ERRORS, metrics.SLACK_ERRORS):
        family.clear()
    metrics.STEP_SECONDS.clear()


@pytest.fixture(scope="module")
def redis_url_module() -> str:
    return session_redis.url()


@pytest.fixture(scope="module")
def shared_redis(redis_url_module: str) -> Iterator[redis.Redis]:
    """For a module whose fixtures (a worker process) keep keys across its tests: flushed around
    the module, not each test."""
    client = redis.Redis.from_url(redis_url_module)
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


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
