"""The pods/eviction subresource, following the API server's eviction REST handler."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from kubesim.clock import rfc3339
from kubesim.entries import Entry
from kubesim.errors import ApiError, bad_request, forbidden, too_many_requests
from kubesim.http_messages import Response, json_response
from kubesim.pod_objects import pod_ready
from kubesim.resources import PDBS, PODS
from kubesim.selectors import selector_from_label_selector

if TYPE_CHECKING:
    from kubesim.protocols import SimCluster

BLOCKED = "Cannot evict pod as it would violate the pod's disruption budget."
MAX_DISRUPTED_PODS = 2000


def can_ignore_pdb(pod: dict[str, Any]) -> bool:
    """Terminal, Pending or already terminating pods are deleted without a budget check."""
    phase = pod.get("status", {}).get("phase")
    return phase in ("Succeeded", "Failed", "Pending") or bool(
        pod["metadata"].get("deletionTimestamp")
    )


def matching_pdbs(cluster: SimCluster, pod: dict[str, Any]) -> list[Entry]:
    """PDBs in the pod's namespace whose (non-empty) selector matches its labels."""
    namespace = pod["metadata"].get("namespace", "")
    labels = pod["metadata"].get("labels") or {}
    found = []
    for entry in cluster.store.list(PDBS, namespace):
        selector = selector_from_label_selector(entry.obj.get("spec", {}).get("selector"))
        if selector is None or selector.empty or not selector.matches(labels):
            continue
        found.append(entry)
    return found


def _success() -> Response:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
    return json_response(201, body)


class Evictions:
    def __init__(self, cluster: SimCluster) -> None:
        self.cluster = cluster

    def evict(self, namespace: str, name: str, eviction: dict[str, Any]) -> Response:
        if (eviction.get("metadata") or {}).get("name") != name:
            raise bad_request("name in URL does not match name in Eviction object")
        options = eviction.get("deleteOptions") or {}
        grace = options.get("gracePeriodSeconds")
        cluster = self.cluster
        with cluster.lock:
            pod = cluster.store.require(PODS, namespace, name).obj
            if can_ignore_pdb(pod):
                self._delete(namespace, name, grace)
                return _success()
            pdbs = matching_pdbs(cluster, pod)
            if len(pdbs) > 1:
                body = {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Failure",
                    "message": "This pod has more than one PodDisruptionBudget, which the "
                    "eviction subresource does not support.",
                    "code": 500,
                }
                return Response(500, json.dumps(body, separators=(",", ":")).encode())
            if pdbs:
                pdb = pdbs[0].obj
                status = pdb.get("status", {})
                desired = status.get("desiredHealthy", 0)
                unready_spare = (
                    not pod_ready(pod)
                    and status.get("currentHealthy", 0) >= desired
                    and desired > 0
                )
                if not unready_spare:
                    self._check_and_decrement(pdb, name)
            self._delete(namespace, name, grace)
            return _success()

    def _delete(self, namespace: str, name: str, grace: int | None) -> None:
        """Mark the pod as a disruption target (as 1.31+ servers do), then delete it."""
        cluster = self.cluster
        pod = cluster.store.require(PODS, namespace, name).obj
        phase = pod.get("status", {}).get("phase")
        if not pod["metadata"].get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
            now = rfc3339(cluster.world.clock.time())

            def mark(obj: dict[str, Any]) -> None:
                conditions = obj.setdefault("status", {}).setdefault("conditions", [])
                conditions[:] = [c for c in conditions if c.get("type") != "DisruptionTarget"]
                conditions.append(
                    {
                        "type": "DisruptionTarget",
                        "status": "True",
                        "lastProbeTime": None,
                        "lastTransitionTime": now,
                        "reason": "EvictionByEvictionAPI",
                        "message": "Eviction API: evicting",
                    }
                )

            cluster.store.mutate(PODS, namespace, name, mark)
        cluster.delete_pod(namespace, name, grace)

    def _check_and_decrement(self, pdb: dict[str, Any], pod_name: str) -> None:
        meta, status = pdb["metadata"], pdb.get("status", {})
        pdb_name = meta["name"]
        if status.get("observedGeneration", 0) < meta.get("generation", 1):
            raise too_many_requests(
                BLOCKED,
                retry_after=10,
                causes=[
                    {
                        "reason": "DisruptionBudget",
                        "message": f"The disruption budget {pdb_name} is still being processed "
                        "by the server.",
                    }
                ],
            )
        allowed = status.get("disruptionsAllowed", 0)
        if allowed < 0:
            raise forbidden(
                "poddisruptionbudget", pdb_name, "policy", "pdb disruptions allowed is negative"
            )
        if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
            raise forbidden(
                "poddisruptionbudget",
                pdb_name,
                "policy",
                "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
            )
        if allowed == 0:
            healthy, desired = status.get("currentHealthy", 0), status.get("desiredHealthy", 0)
            why = (
                f"The disruption budget {pdb_name} needs {desired} healthy pods and has "
                f"{healthy} currently"
                if healthy <= desired  # otherwise the server's default branch
                else f"The disruption budget {pdb_name} does not allow evicting pods currently"
            )
            raise too_many_requests(
                BLOCKED, causes=[{"reason": "DisruptionBudget", "message": why}]
            )
        now = rfc3339(self.cluster.world.clock.time())

        def decrement(obj: dict[str, Any]) -> None:
            st = obj.setdefault("status", {})
            st["disruptionsAllowed"] = st.get("disruptionsAllowed", 0) - 1
            st.setdefault("disruptedPods", {})[pod_name] = now
            if st["disruptionsAllowed"] == 0:
                from kubesim.behaviours.disruption import set_allowed_condition

                set_allowed_condition(obj, now)

        self.cluster.store.mutate(PDBS, meta["namespace"], pdb_name, decrement)


__all__ = ["ApiError", "Evictions", "can_ignore_pdb", "matching_pdbs"]
