"""A node of the asked name already in the target: and did joinops move it there?

A move's clean-up annotates the node in its new cluster with the request that moved it
(`joinops.io/request`, beside `joinops.io/migrated-from`: workers/node_steps.py); its Node object
was created when it joined. So one GET of the target's Node tells a node joinops just moved
(never to be deleted) from an old record of another machine of the same name.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from joinops.clusters.kube import KubeCluster
from joinops.errors import ClusterNotFound

MOVED_BY = "joinops.io/request"  # on a moved Node: the request that moved it
MOVED_FROM = "joinops.io/migrated-from"  # on a moved Node: the cluster it came from


@dataclass(frozen=True)
class Resident:
    """The target's Node of that name."""

    moved_by: str = ""  # the request that moved it there; "" when joinops did not
    moved_from: str = ""
    joined: datetime | None = None  # its Node's creation: when it joined the target


def read(target: KubeCluster, node: str) -> Resident | None:
    """The target's Node named `node` (one GET), None when there is none."""
    try:
        found = target.call("get", f"nodes/{node}", target.core.read_node, node)
    except ClusterNotFound:
        return None
    return resident(found)


def resident(node: Any) -> Resident:
    annotations = node.metadata.annotations or {}
    created = node.metadata.creation_timestamp
    return Resident(
        moved_by=str(annotations.get(MOVED_BY) or ""),
        moved_from=str(annotations.get(MOVED_FROM) or ""),
        joined=created if isinstance(created, datetime) else None,
    )
