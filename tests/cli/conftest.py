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
            nodes=[
                NodeSpec("a-cp-1", role="control-plane"),
                NodeSpec("a-cp-2", role="control-plane"),
                NodeSpec("a-cp-3", role="control-plane"),
                NodeSpec("a-w-1"),
                NodeSpec("a-w-2"),
            ],
        )
        w.add_cluster(
            "clusterB",
            version="v1.32.2",
            control_plane_endpoint="cp.b.test:6443",
            nodes=[NodeSpec("b-cp-1", role="control-plane"), NodeSpec("b-w-1")],
        )
        w.add_cluster(
            "host-1",
            version="v1.32.0",
            control_plane_endpoint="h1.test:6443",
            nodes=[NodeSpec("node-1", role="control-plane")],
        )
        yield w


@pytest.fixture
def make_ctx(world, tmp_path, redis_client, redis_url):
    """An engine context on the simulated world; timeouts can be overridden per test."""
    made: list[EngineContext] = []

    def make(hooks=None, **overrides) -> EngineContext:  # type: ignore[no-untyped-def]
        settings = settings_for(world, tmp_path, redis_url=redis_url, **overrides)
        ctx = EngineContext.from_settings(settings)
        ctx.reporter = RecordingReporter(ctx.redis, hooks)
        context.install(ctx)
        made.append(ctx)
        return ctx

    yield make
    context.install(None)
