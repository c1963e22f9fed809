"""Simulated clusters wired to joinops settings, for tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from joinops.clusters.registry import ClusterRegistry
from joinops.settings import FileConfig, Secrets, Settings, build_settings
from kubesim import World
from tests.support import session_redis


def config_dict(world: World, kubeconfig: Path, **overrides: Any) -> dict[str, Any]:
    world.write_kubeconfig(kubeconfig)
    config: dict[str, Any] = {
        "clusters": {
            name: {"kubeconfig": str(kubeconfig), "context": name} for name in world.clusters
        },
        "approvers": ["UAPPROVER1", "UAPPROVER2"],
        "timeouts": {
            "approval": "30m",
            "drain": "20s",
            "join": "20s",
            "upload_certs": "10s",
            "api": "5s",
            "lock": "2s",
        },
    }
    for key, value in overrides.items():
        if key == "clusters":  # a list of clusters of its own: not merged with the world's
            config[key] = value
        elif key == "cluster_options":  # {cluster: {setting: value}} for the world's clusters
            for name, options in value.items():
                config["clusters"][name].update(options)
        elif isinstance(value, dict) and isinstance(config.get(key), dict):
            config[key] = {**config[key], **value}
        else:
            config[key] = value
    return config


def write_config(world: World, directory: Path, **overrides: Any) -> Path:
    path = directory / "joinops.yaml"
    path.write_text(yaml.safe_dump(config_dict(world, directory / "kubeconfig", **overrides)))
    return path


def settings_for(
    world: World, directory: Path, redis_url: str | None = None, **overrides: Any
) -> Settings:
    raw = config_dict(world, directory / "kubeconfig", **overrides)
    url = redis_url or session_redis.url()
    return build_settings(FileConfig.model_validate(raw), Secrets(redis_url=url))


def registry_for(world: World, directory: Path, **overrides: Any) -> ClusterRegistry:
    return ClusterRegistry(settings_for(world, directory, **overrides))


def add_standard_clusters(world: World) -> World:
    """clusterA (three control planes, two workers), clusterB, and the single-node host-1."""
    from kubesim import NodeSpec

    world.add_cluster(
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
    world.add_cluster(
        "clusterB",
        version="v1.32.2",
        control_plane_endpoint="cp.b.test:6443",
        nodes=[NodeSpec("b-cp-1", role="control-plane"), NodeSpec("b-w-1")],
    )
    world.add_cluster(
        "host-1",
        version="v1.32.0",
        control_plane_endpoint="h1.test:6443",
        nodes=[NodeSpec("node-1", role="control-plane")],
    )
    return world


def add_single_node_hosts(world: World, count: int, version: str = "v1.32.1") -> World:
    """host-1 … host-`count`: each a host booted into a single-node cluster of its own (its node
    `node-i`, a control plane), as stitching finds them."""
    from kubesim import NodeSpec

    for i in range(1, count + 1):
        world.add_cluster(
            f"host-{i}",
            version=version,
            control_plane_endpoint=f"h{i}.test:6443",
            nodes=[NodeSpec(f"node-{i}", role="control-plane")],
        )
    return world
