"""PersistentVolumes and claims: the binder (claims to fitting volumes) and the scheduler's
volume checks (a bound volume's node affinity; an unbound claim needs a volume on the node).

A claim binds at once to a fitting Available volume without node affinity; one that only fits
node-affine volumes (``local``/``hostPath`` pinned to a node) binds when its pod is scheduled,
as with ``WaitForFirstConsumer``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from kubesim.controllers.base import WorkQueue
from kubesim.controllers.placement import NO_VOLUME, VOLUME_AFFINITY, node_selector_matches
from kubesim.entries import Change, Entry
from kubesim.resources import PERSISTENTVOLUMES, PVCS

if TYPE_CHECKING:
    from kubesim.protocols import SimCluster, SimWorld

_UNITS = {
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
}
_QUANTITY = re.compile(r"^([0-9.]+)([A-Za-z]*)$")


def quantity(text: Any) -> float:
    match = _QUANTITY.match(str(text or "0"))
    if match is None or match.group(2) not in _UNITS:
        return 0.0
    return float(match.group(1)) * _UNITS[match.group(2)]


def volume_affinity(pv: dict[str, Any]) -> dict[str, Any] | None:
    found: dict[str, Any] | None = (pv.get("spec", {}).get("nodeAffinity") or {}).get("required")
    return found


def fits(pv: dict[str, Any], pvc: dict[str, Any]) -> bool:
    """The volume is free and satisfies the claim (class, access modes, size)."""
    spec, claim = pv.get("spec") or {}, pvc.get("spec") or {}
    if spec.get("claimRef") or pv.get("status", {}).get("phase", "Available") != "Available":
        return False
    if (spec.get("storageClassName") or "") != (claim.get("storageClassName") or ""):
        return False
    if not set(claim.get("accessModes") or []) <= set(spec.get("accessModes") or []):
        return False
    wanted = quantity((claim.get("resources") or {}).get("requests", {}).get("storage"))
    return quantity((spec.get("capacity") or {}).get("storage")) >= wanted


def bind(cluster: SimCluster, pvc: Entry, pv: Entry) -> None:
    meta = pvc.meta
    volume = pv.copy()
    volume["spec"]["claimRef"] = {
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        "namespace": meta["namespace"],
        "name": meta["name"],
        "uid": meta.get("uid", ""),
        "resourceVersion": meta.get("resourceVersion", ""),
    }
    volume.setdefault("status", {})["phase"] = "Bound"
    cluster.store.put(PERSISTENTVOLUMES, volume)
    claim = pvc.copy()
    claim["spec"]["volumeName"] = pv.meta["name"]
    claim["metadata"].setdefault("annotations", {})["pv.kubernetes.io/bind-completed"] = "yes"
    claim["status"] = {
        "phase": "Bound",
        "accessModes": list(pv.obj["spec"].get("accessModes") or []),
        "capacity": dict(pv.obj["spec"].get("capacity") or {}),
    }
    cluster.store.put(PVCS, claim)


def claim_names(pod: dict[str, Any]) -> list[str]:
    return [
        v["persistentVolumeClaim"]["claimName"]
        for v in pod.get("spec", {}).get("volumes") or []
        if (v.get("persistentVolumeClaim") or {}).get("claimName")
    ]


def volume_check(
    cluster: SimCluster, pod: dict[str, Any], node: dict[str, Any]
) -> tuple[str | None, list[tuple[Entry, Entry]]]:
    """(why the pod's volumes rule the node out or None, the claim->volume bindings to make)."""
    namespace = pod["metadata"]["namespace"]
    bindings: list[tuple[Entry, Entry]] = []
    chosen: set[str] = set()
    for claim_name in claim_names(pod):
        pvc = cluster.store.get(PVCS, namespace, claim_name)
        if pvc is None:
            return f'persistentvolumeclaim "{claim_name}" not found', []
        bound_to = pvc.obj.get("spec", {}).get("volumeName")
        if bound_to:
            pv = cluster.store.get(PERSISTENTVOLUMES, "", bound_to)
            affinity = volume_affinity(pv.obj) if pv else None
            if affinity and not node_selector_matches(affinity, node):
                return VOLUME_AFFINITY, []
            continue
        candidate = next(
            (
                pv
                for pv in cluster.store.list(PERSISTENTVOLUMES)
                if pv.meta["name"] not in chosen
                and fits(pv.obj, pvc.obj)
                and node_selector_matches(volume_affinity(pv.obj), node)
            ),
            None,
        )
        if candidate is None:
            return NO_VOLUME, []
        chosen.add(candidate.meta["name"])
        bindings.append((pvc, candidate))
    return None, bindings


class VolumeBinder:
    """Binds claims to volumes that need no node decision; retries when volumes change."""

    def __init__(self, world: SimWorld) -> None:
        self.queue = WorkQueue(world, self.sync)

    def on_claim(self, cluster: SimCluster, change: Change) -> None:
        if change.type == "DELETED":
            self._release(cluster, change.new)
        else:
            self.queue.add(cluster, change.new.meta["namespace"], change.new.meta["name"])

    def on_volume(self, cluster: SimCluster, change: Change) -> None:
        if change.type == "DELETED":
            return
        for pvc in cluster.store.list(PVCS):
            if not pvc.obj.get("spec", {}).get("volumeName"):
                self.queue.add(cluster, pvc.meta["namespace"], pvc.meta["name"])

    def sync(self, cluster: SimCluster, namespace: str, name: str) -> None:
        pvc = cluster.store.get(PVCS, namespace, name)
        if pvc is None or pvc.obj.get("status", {}).get("phase") == "Bound":
            return
        wanted = pvc.obj.get("spec", {}).get("volumeName")
        if wanted:
            pv = cluster.store.get(PERSISTENTVOLUMES, "", wanted)
            ref = (pv.obj.get("spec", {}).get("claimRef") or {}) if pv else {}
            if pv is not None and (not ref or ref.get("name") == name):
                bind(cluster, pvc, pv)
            return
        for pv in cluster.store.list(PERSISTENTVOLUMES):
            if volume_affinity(pv.obj) is None and fits(pv.obj, pvc.obj):
                bind(cluster, pvc, pv)
                return

    @staticmethod
    def _release(cluster: SimCluster, pvc: Entry) -> None:
        volume_name = pvc.obj.get("spec", {}).get("volumeName")
        pv = cluster.store.get(PERSISTENTVOLUMES, "", volume_name) if volume_name else None
        if pv is None:
            return
        obj = pv.copy()
        obj.setdefault("status", {})["phase"] = "Released"
        cluster.store.put(PERSISTENTVOLUMES, obj)
