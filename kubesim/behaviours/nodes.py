"""Node lifecycle controller: the ``node.kubernetes.io/unschedulable`` taint follows cordoning;
a deleted Node's pod ranges go back to the node IPAM (kubesim.node_ipam)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesim.entries import Change
from kubesim.node_objects import UNSCHEDULABLE_TAINT
from kubesim.resources import NODES

if TYPE_CHECKING:
    from kubesim.protocols import SimCluster, SimWorld


def _tainted(node: dict[str, Any]) -> bool:
    return any(
        t.get("key") == UNSCHEDULABLE_TAINT for t in node.get("spec", {}).get("taints") or []
    )


class NodeLifecycle:
    def __init__(self, world: SimWorld) -> None:
        self.world = world

    def on_node(self, cluster: SimCluster, change: Change) -> None:
        if change.type == "DELETED":
            cluster.release_pod_cidrs(change.new.meta["name"])
            return
        node = change.new.obj
        if bool(node.get("spec", {}).get("unschedulable")) != _tainted(node):
            name = change.new.meta["name"]
            self.world.schedule(0, lambda: self.sync(cluster, name))

    def sync(self, cluster: SimCluster, name: str) -> None:
        now = cluster.now()

        def fix(node: dict[str, Any]) -> bool:
            spec = node.setdefault("spec", {})
            cordoned = bool(spec.get("unschedulable"))
            if cordoned == _tainted(node):
                return False
            taints = [t for t in spec.get("taints") or [] if t.get("key") != UNSCHEDULABLE_TAINT]
            if cordoned:
                taints.append(
                    {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule", "timeAdded": now}
                )
            spec["taints"] = taints
            if not taints:
                del spec["taints"]
            return True

        cluster.store.mutate(NODES, "", name, fix)
