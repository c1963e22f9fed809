"""The disruption controller: keeps each PodDisruptionBudget's status in line with its pods.

As the real one: ``minAvailable: N`` expects the matching pods; ``maxUnavailable`` and
percentages expect the sum of the pods' controllers' replicas (a Deployment's for its
ReplicaSets; pods without a controller do
not count, an unknown controller makes the sync fail safe: nothing allowed, SyncFailed);
healthy pods are Ready, not terminating and not already in ``disruptedPods``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from kubesim.clock import parse_rfc3339, rfc3339
from kubesim.entries import Change
from kubesim.pod_objects import pod_healthy
from kubesim.resources import DEPLOYMENTS, PDBS, PODS, REPLICASETS, STATEFULSETS
from kubesim.selectors import selector_from_label_selector

if TYPE_CHECKING:
    from kubesim.protocols import SimCluster, SimWorld

DELETION_TIMEOUT = 120.0  # seconds an eviction stays in disruptedPods without the pod going


class SyncFailedError(Exception):
    """The controller cannot compute the budget (for example a pod's controller is unknown)."""


def _scaled(value: int | str, total: int) -> int:
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(value)


def _controller_of(cluster: SimCluster, namespace: str, ref: dict[str, Any]) -> tuple[str, int]:
    """(uid, replicas) of the scalable controller behind a pod's controllerRef, as the
    disruption controller's finders resolve it: a ReplicaSet owned by a Deployment counts
    as the Deployment."""
    res = {"ReplicaSet": REPLICASETS, "StatefulSet": STATEFULSETS}.get(ref.get("kind", ""))
    owner = cluster.store.get(res, namespace, ref.get("name", "")) if res else None
    if owner is None or owner.meta.get("uid") != ref.get("uid"):
        raise SyncFailedError("found no controllers")
    if res is REPLICASETS:
        up = next((r for r in owner.meta.get("ownerReferences") or [] if r.get("controller")), None)
        if up is not None and up.get("kind") == "Deployment":
            deployment = cluster.store.get(DEPLOYMENTS, namespace, up.get("name", ""))
            if deployment is not None and deployment.meta.get("uid") == up.get("uid"):
                owner = deployment
    return owner.meta["uid"], int(owner.obj.get("spec", {}).get("replicas", 1))


def controller_scale(cluster: SimCluster, pods: list[dict[str, Any]]) -> int:
    """Sum of the replicas of the pods' controllers (ReplicaSets, Deployments, StatefulSets)."""
    scales: dict[str, int] = {}
    for pod in pods:
        refs = pod["metadata"].get("ownerReferences") or []
        ref = next((r for r in refs if r.get("controller")), None)
        if ref is None:
            continue
        try:
            uid, replicas = _controller_of(cluster, pod["metadata"]["namespace"], ref)
        except SyncFailedError:
            raise SyncFailedError(
                f'found no controllers for pod "{pod["metadata"]["name"]}"'
            ) from None
        scales[uid] = replicas
    return sum(scales.values())


def expected_and_desired(
    cluster: SimCluster, spec: dict[str, Any], pods: list[dict[str, Any]]
) -> tuple[int, int]:
    """(expectedPods, desiredHealthy) as the disruption controller computes them."""
    if spec.get("maxUnavailable") is not None:
        expected = controller_scale(cluster, pods)
        return expected, max(0, expected - _scaled(spec["maxUnavailable"], expected))
    min_available = spec.get("minAvailable")
    if isinstance(min_available, int):
        return len(pods), min_available
    if min_available is not None:
        expected = controller_scale(cluster, pods)
        return expected, _scaled(min_available, expected)
    return len(pods), len(pods)


def set_allowed_condition(pdb: dict[str, Any], now: str, failure: str = "") -> None:
    status = pdb.setdefault("status", {})
    allowed = status.get("disruptionsAllowed", 0) > 0 and not failure
    reason = "SyncFailed" if failure else "SufficientPods" if allowed else "InsufficientPods"
    wanted = {
        "type": "DisruptionAllowed",
        "status": "True" if allowed else "False",
        "reason": reason,
        "message": failure,
        "observedGeneration": status.get("observedGeneration", 0),
    }
    conditions = status.get("conditions") or []
    old = next((c for c in conditions if c.get("type") == "DisruptionAllowed"), None)
    same = old is not None and old.get("status") == wanted["status"]
    wanted["lastTransitionTime"] = old.get("lastTransitionTime", now) if same and old else now
    status["conditions"] = [wanted]


class DisruptionController:
    def __init__(self, world: SimWorld) -> None:
        self.world = world
        self._pending: set[tuple[str, str, str]] = set()

    def on_pdb(self, cluster: SimCluster, change: Change) -> None:
        if change.type == "DELETED":
            return
        meta, status = change.new.meta, change.new.obj.get("status", {})
        if status.get("observedGeneration", 0) < meta.get("generation", 1):
            self._later(cluster, meta["namespace"], meta["name"])

    def on_pod(self, cluster: SimCluster, change: Change) -> None:
        namespace = change.new.meta.get("namespace", "")
        pdbs = cluster.store.list(PDBS, namespace)
        if not pdbs:
            return
        labels = [e.meta.get("labels") or {} for e in (change.old, change.new) if e is not None]
        for entry in pdbs:
            selector = selector_from_label_selector(entry.obj.get("spec", {}).get("selector"))
            if selector is not None and any(selector.matches(lbl) for lbl in labels):
                self._later(cluster, namespace, entry.meta["name"])

    def _later(self, cluster: SimCluster, namespace: str, name: str) -> None:
        key = (cluster.name, namespace, name)
        if key in self._pending:
            return
        self._pending.add(key)

        def run() -> None:
            self._pending.discard(key)
            self.sync(cluster, namespace, name)

        self.world.schedule(self.world.pdb_sync_seconds, run)

    def sync(self, cluster: SimCluster, namespace: str, name: str) -> None:
        """Recompute the budget's status from its pods, as the controller does."""
        with cluster.lock:
            entry = cluster.store.get(PDBS, namespace, name)
            if entry is None:
                return
            pdb = entry.copy()
            selector = selector_from_label_selector(pdb.get("spec", {}).get("selector"))
            pods = []
            if selector is not None and not selector.empty:
                pods = [
                    e.obj
                    for e in cluster.store.list(PODS, namespace)
                    if selector.matches(e.meta.get("labels"))
                ]
            now_ts = cluster.world.clock.time()
            now = rfc3339(now_ts)
            status = pdb.setdefault("status", {})
            try:
                expected, desired = expected_and_desired(cluster, pdb.get("spec", {}), pods)
            except SyncFailedError as failure:  # fail safe: nothing allowed, generation unseen
                status["disruptionsAllowed"] = 0
                set_allowed_condition(pdb, now, str(failure))
            else:
                disrupted = self._still_disrupted(pdb, pods, now_ts)
                healthy = sum(
                    1 for p in pods if pod_healthy(p) and p["metadata"]["name"] not in disrupted
                )
                allowed = healthy - desired if expected > 0 else 0
                status.update(
                    currentHealthy=healthy,
                    desiredHealthy=desired,
                    expectedPods=expected,
                    disruptionsAllowed=max(0, allowed),
                    observedGeneration=pdb["metadata"].get("generation", 1),
                )
                if disrupted:
                    status["disruptedPods"] = disrupted
                else:
                    status.pop("disruptedPods", None)
                set_allowed_condition(pdb, now)
            if pdb.get("status") != entry.obj.get("status"):
                cluster.store.put(PDBS, pdb)

    @staticmethod
    def _still_disrupted(
        pdb: dict[str, Any], pods: list[dict[str, Any]], now: float
    ) -> dict[str, str]:
        """disruptedPods entries whose pod still exists, is not terminating and is recent."""
        live = {p["metadata"]["name"]: p for p in pods}
        kept = {}
        for pod_name, when in (pdb.get("status", {}).get("disruptedPods") or {}).items():
            pod = live.get(pod_name)
            if pod is None or pod["metadata"].get("deletionTimestamp"):
                continue
            started = parse_rfc3339(when)
            if started is not None and started + DELETION_TIMEOUT < now:
                continue
            kept[pod_name] = when
        return kept
