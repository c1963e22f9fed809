"""Fault tests: simulated clusters, the shared test Redis, and engine contexts on both."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kubesim import NodeSpec, World
from tests.support.clusters import settings_for
from tests.support.engine import RecordingReporter
from workers import context
from workers.context import EngineContext


@pytest.fixture
def world() -> Iterator[World]:
    with World(pod_grace_seconds=0.05, join_seconds=0.1) as w:
        w.add_cluster(
            "clusterA",
            version="v1.31.4",
            control_plane_endpoint="cp.a.test:6443",
            nodes=[NodeSpec("a-cp-1", role="control-plane"), NodeSpec("a-w-1"), NodeSpec("a-w-2")],
        )
        w.add_cluster(
            "clusterB",
            version="v1.32.2",
            control_plane_endpoint="cp.b.test:6443",
            nodes=[NodeSpec("b-cp-1", role="control-plane"), NodeSpec("b-w-1")],
        )
        yield w
        assert w.internal_errors == []


@pytest.fixture
def make_ctx(world, tmp_path, redis_client, redis_url):  # type: ignore[no-untyped-def]
    """An engine context on the simulated world; settings can be overridden per test."""

    def make(hooks=None, url: str | None = None, **overrides) -> EngineContext:  # type: ignore[no-untyped-def]
        settings = settings_for(world, tmp_path, redis_url=url or redis_url, **overrides)
        ctx = EngineContext.from_settings(settings)
        ctx.reporter = RecordingReporter(ctx.redis, hooks)
        context.install(ctx)
        return ctx

    yield make
    context.install(None)
