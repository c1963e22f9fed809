"""Simulated clusters wired to joinops settings, for tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from joinops.clusters import ClusterRegistry
from joinops.settings import FileConfig, Secrets, Settings, build_settings
from kubesim import World


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
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            config[key] = {**config[key], **value}
        else:
            config[key] = value
    return config


def write_config(world: World, directory: Path, **overrides: Any) -> Path:
    path = directory / "joinops.yaml"
    path.write_text(yaml.safe_dump(config_dict(world, directory / "kubeconfig", **overrides)))
    return path


def settings_for(
    world: World, directory: Path, redis_url: str = "redis://127.0.0.1:6379/9", **overrides: Any
) -> Settings:
    raw = config_dict(world, directory / "kubeconfig", **overrides)
    return build_settings(FileConfig.model_validate(raw), Secrets(redis_url=redis_url))


def registry_for(world: World, directory: Path, **overrides: Any) -> ClusterRegistry:
    return ClusterRegistry(settings_for(world, directory, **overrides))
