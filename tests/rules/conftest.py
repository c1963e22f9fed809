from __future__ import annotations

from collections.abc import Iterator

import pytest

from kubesim import NodeSpec, World
from tests.support.clusters import write_config


@pytest.fixture
def world() -> Iterator[World]:
    with World() as w:
        w.add_cluster(
            "clusterA",
            version="v1.31.4",
            nodes=[
                NodeSpec("a-cp-1", role="control-plane"),
                NodeSpec("a-w-1"),
                NodeSpec("a-w-old", kubelet_version="v1.29.5"),
                NodeSpec("a-w-new", kubelet_version="v1.33.0"),
                NodeSpec("taken"),
            ],
        )
        w.add_cluster(
            "clusterB",
            version="v1.32.2",
            control_plane_endpoint="cp.b.test:6443",
            nodes=[NodeSpec("b-cp-1", role="control-plane"), NodeSpec("b-w-1"), NodeSpec("taken")],
        )
        w.add_cluster(
            "clusterC", version="v1.31.1", nodes=[NodeSpec("c-cp-1", role="control-plane")]
        )
        w.add_cluster(
            "host-1",
            version="v1.31.0",
            control_plane_endpoint="h1.test:6443",
            nodes=[NodeSpec("node-1", role="control-plane")],
        )
        yield w


@pytest.fixture
def configured(world, tmp_path, monkeypatch) -> World:
    monkeypatch.setenv("JOINOPS_CONFIG", str(write_config(world, tmp_path)))
    return world
