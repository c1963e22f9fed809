"""The garbage collector, for workloads: deleting an owner deletes what it controls
(background propagation: a Deployment's ReplicaSets, then their pods)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubesim.controllers.base import controller_ref
from kubesim.entries import Change
from kubesim.resources import PODS, REPLICASETS

if TYPE_CHECKING:
    from kubesim.protocols import SimCluster, SimWorld

_DEPENDENTS = {
    "deployments": (REPLICASETS,),
    "replicasets": (PODS,),
    "statefulsets": (PODS,),
    "jobs": (PODS,),
}
OWNERS = tuple(_DEPENDENTS)


class GarbageCollector:
    def __init__(self, world: SimWorld) -> None:
        self.world = world

    def on_owner_deleted(self, cluster: SimCluster, change: Change) -> None:
        uid = change.new.meta.get("uid")
        namespace = change.new.meta.get("namespace", "")
        for res in _DEPENDENTS.get(change.resource, ()):
            for entry in cluster.store.list(res, namespace):
                ref = controller_ref(entry.obj)
                if ref is None or ref.get("uid") != uid:
                    continue
                if res is PODS:
                    cluster.delete_pod(namespace, entry.meta["name"])
                else:
                    cluster.store.remove(res, namespace, entry.meta["name"])
