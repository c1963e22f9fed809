"""A configuration with a hosts directory: clusterA and clusterB configured, hosts dropped in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubesim import World


def arrivals_config(world: World, directory: Path, hosts: Path, **arrivals: Any) -> dict[str, Any]:
    """`config_dict` overrides: only clusterA and clusterB under `clusters:`, `hosts` as the
    directory, polled every 0.2 s unless told otherwise."""
    kubeconfig = directory / "kubeconfig"
    world.write_kubeconfig(kubeconfig, only=["clusterA", "clusterB"])
    return {
        "clusters": {
            name: {"kubeconfig": str(kubeconfig), "context": name}
            for name in ("clusterA", "clusterB")
        },
        "arrivals": {"directory": str(hosts), "poll": 0.2, **arrivals},
    }


def drop_host(world: World, hosts: Path, cluster: str, file: str | None = None) -> Path:
    """Write `cluster`'s own kubeconfig into the directory, atomically (as a provisioner would)."""
    hosts.mkdir(parents=True, exist_ok=True)
    final = hosts / (file or f"{cluster}.yaml")
    temporary = hosts / f".{final.name}.tmp"
    world.write_kubeconfig(temporary, only=[cluster])
    temporary.rename(final)
    return final
