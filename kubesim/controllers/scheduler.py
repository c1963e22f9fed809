"""A minimal default scheduler: binds each unbound pod to the fitting node with the fewest pods,
or leaves it Pending with ``PodScheduled=False``, reason ``Unschedulable`` and the scheduler's
``0/N nodes are available: ...`` message. Pending pods are retried when nodes or volumes change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesim.controllers.base import WorkQueue
from kubesim.controllers.placement import node_reason, unschedulable_message
from kubesim.controllers.volumes import bind, volume_check
from kubesim.entries import Change, Entry
from kubesim.errors import ApiError
from kubesim.resources import NODES, PODS

if TYPE_CHECKING:
    from kubesim.protocols import SimCluster, SimWorld

SCHEDULER_NAME = "default-scheduler"


def wants_scheduling(pod: dict[str, Any]) -> bool:
    spec = pod.get("spec") or {}
    return (
        not spec.get("nodeName")
        and spec.get("schedulerName", SCHEDULER_NAME) == SCHEDULER_NAME
        and not pod["metadata"].get("deletionTimestamp")
        and pod.get("status", {}).get("phase", "Pending") == "Pending"
    )


def bind_pod(cluster: SimCluster, namespace: str, name: str, node: str) -> None:
    """What ``pods/binding`` does: set ``spec.nodeName`` and ``PodScheduled=True``; 409 when
    the pod is already assigned."""
    entry = cluster.store.require(PODS, namespace, name)
    assigned = entry.obj.get("spec", {}).get("nodeName")
    if assigned:
        raise ApiError(
            409,
            f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} is already '
            f'assigned to node "{assigned}"',
            reason="Conflict",
            details={"name": name, "kind": "pods/binding"},
        )
    now = cluster.now()

    def place(obj: dict[str, Any]) -> None:
        obj["spec"]["nodeName"] = node
        conditions = obj.setdefault("status", {}).setdefault("conditions", [])
        conditions[:] = [c for c in conditions if c.get("type") != "PodScheduled"]
        conditions.append(
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": now,
            }
        )

    cluster.store.mutate(PODS, namespace, name, place)


class Scheduler:
    def __init__(self, world: SimWorld) -> None:
        self.queue = WorkQueue(world, self.sync)
        self._waiting: dict[str, set[tuple[str, str]]] = {}  # cluster -> unschedulable pods

    def on_pod(self, cluster: SimCluster, change: Change) -> None:
        key = (change.new.meta["namespace"], change.new.meta["name"])
        if change.type != "DELETED" and wants_scheduling(change.new.obj):
            self.queue.add(cluster, *key)
            return
        self._waiting.get(cluster.name, set()).discard(key)
        if change.type == "DELETED":
            self.retry_pending(cluster)  # room freed (e.g. a node-local volume)

    def on_node(self, cluster: SimCluster, change: Change) -> None:
        old = change.old.obj if change.old is not None else None
        new = change.new.obj
        if change.type == "DELETED":
            return
        if (
            old is None
            or old.get("spec") != new.get("spec")
            or old["metadata"].get("labels") != new["metadata"].get("labels")
        ):
            self.retry_pending(cluster)

    def retry_pending(self, cluster: SimCluster) -> None:
        for namespace, name in list(self._waiting.get(cluster.name, ())):
            self.queue.add(cluster, namespace, name)

    def sync(self, cluster: SimCluster, namespace: str, name: str) -> None:
        entry = cluster.store.get(PODS, namespace, name)
        if entry is None or not wants_scheduling(entry.obj):
            return
        nodes = cluster.store.list(NODES)
        load = self._load(cluster)
        reasons: list[str] = []
        best: tuple[int, str, Entry, list[tuple[Entry, Entry]]] | None = None
        for node in nodes:
            reason = node_reason(entry.obj, node.obj)
            bindings: list[tuple[Entry, Entry]] = []
            if reason is None:
                reason, bindings = volume_check(cluster, entry.obj, node.obj)
            if reason is not None:
                reasons.append(reason)
                continue
            rank = (load.get(node.meta["name"], 0), node.meta["name"])
            if best is None or rank < best[:2]:
                best = (*rank, node, bindings)
        if best is None:
            self._waiting.setdefault(cluster.name, set()).add((namespace, name))
            self._unschedulable(cluster, entry, unschedulable_message(len(nodes), reasons))
            return
        self._waiting.get(cluster.name, set()).discard((namespace, name))
        for pvc, pv in best[3]:
            bind(cluster, pvc, pv)
        self._bind(cluster, entry, best[2].meta["name"])

    @staticmethod
    def _load(cluster: SimCluster) -> dict[str, int]:
        load: dict[str, int] = {}
        for pod in cluster.store.list(PODS):
            node = pod.obj.get("spec", {}).get("nodeName")
            if node and pod.obj.get("status", {}).get("phase") not in ("Succeeded", "Failed"):
                load[node] = load.get(node, 0) + 1
        return load

    @staticmethod
    def _bind(cluster: SimCluster, entry: Entry, node: str) -> None:
        bind_pod(cluster, entry.meta["namespace"], entry.meta["name"], node)

    @staticmethod
    def _unschedulable(cluster: SimCluster, entry: Entry, message: str) -> None:
        now = cluster.now()

        def mark(obj: dict[str, Any]) -> bool:
            conditions = obj.setdefault("status", {}).setdefault("conditions", [])
            old = next((c for c in conditions if c.get("type") == "PodScheduled"), None)
            if old is not None and old.get("message") == message:
                return False
            conditions[:] = [c for c in conditions if c.get("type") != "PodScheduled"]
            conditions.append(
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": message,
                    "lastProbeTime": None,
                    "lastTransitionTime": now,
                }
            )
            return True

        cluster.store.mutate(PODS, entry.meta["namespace"], entry.meta["name"], mark)
