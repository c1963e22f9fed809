"""Helpers shared by the kubesim tests (official-client API objects for a cluster)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kubernetes import client

from kubesim import Cluster, NodeSpec, World


@dataclass
class Apis:
    core: client.CoreV1Api
    policy: client.PolicyV1Api
    apps: client.AppsV1Api
    raw: client.ApiClient


def apis_for(cluster: Cluster) -> Apis:
    raw = cluster.api_client()
    return Apis(client.CoreV1Api(raw), client.PolicyV1Api(raw), client.AppsV1Api(raw), raw)


def body(exc: client.ApiException) -> dict[str, Any]:
    """The Status body of an API error."""
    result: dict[str, Any] = json.loads(exc.body)
    return result


def standard_cluster(world: World, name: str = "clusterA") -> Cluster:
    """One control plane and two workers (one with an older kubelet), like the fixture."""
    prefix = name[-1].lower()
    return world.add_cluster(
        name,
        version="v1.31.4",
        nodes=[
            NodeSpec(f"{prefix}-cp-1", role="control-plane"),
            NodeSpec(f"{prefix}-w-1"),
            NodeSpec(f"{prefix}-w-2", kubelet_version="v1.30.9"),
        ],
    )
