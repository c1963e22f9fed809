"""A survey of the configured clusters: version, size and reachability, read in parallel."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from joinops.clusters.registry import ClusterAccess
from joinops.errors import ConfigError, JoinopsError


@dataclass(frozen=True)
class ClusterRow:
    name: str
    reachable: bool
    version: str = ""
    nodes: int | None = None
    control_planes: int | None = None
    endpoint: str = ""
    problem: str = ""


def survey(registry: ClusterAccess) -> list[ClusterRow]:
    """One row per cluster, read in parallel; one broken cluster does not break the others."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(lambda name: _row(registry, name), registry.names))


def _row(registry: ClusterAccess, name: str) -> ClusterRow:
    try:
        cluster = registry.get(name)
        facts = cluster.facts()
        nodes = cluster.call("list", "nodes", cluster.core.list_node, limit=1)
        total = len(nodes.items) + int(nodes.metadata.remaining_item_count or 0)
    except ConfigError as e:
        return ClusterRow(name, False, problem=str(e))
    except JoinopsError as e:
        return ClusterRow(name, False, problem=getattr(e, "detail", str(e)))
    return ClusterRow(
        name,
        True,
        str(facts.version),
        total,
        len(facts.control_planes),
        facts.control_plane_endpoint or facts.server,
    )
