"""Fixtures: a started World with one kubeadm-like cluster, and official-client APIs on it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

# tests/kubesim would otherwise shadow the kubesim package as a namespace package.
_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
if getattr(sys.modules.get("kubesim"), "__file__", "") is None:
    del sys.modules["kubesim"]

import pytest  # noqa: E402
from ksim_support import Apis, apis_for  # noqa: E402

from kubesim import Cluster, NodeSpec, World  # noqa: E402


@pytest.fixture
def world() -> Iterator[World]:
    """Quicker than the defaults; tests that need a visible window make their own World."""
    with World(
        pod_grace_seconds=0.02,
        join_seconds=0.03,
        signer_delay_seconds=0.005,
        pdb_sync_seconds=0.005,
        node_ready_seconds=0.02,
    ) as w:
        yield w
        assert w.internal_errors == []


@pytest.fixture
def cluster_a(world: World) -> Cluster:
    cluster = world.add_cluster(
        "clusterA",
        version="v1.31.4",
        nodes=[
            NodeSpec("a-cp-1", role="control-plane"),
            NodeSpec("a-w-1"),
            NodeSpec("a-w-2", kubelet_version="v1.30.9"),
        ],
    )
    yield cluster
    assert cluster.internal_errors == []


@pytest.fixture
def apis(cluster_a: Cluster) -> Apis:
    return apis_for(cluster_a)
