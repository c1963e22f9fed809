"""The Deployment controller: one ReplicaSet per pod template, as the real one names them.

The current template's ReplicaSet is ``<deployment>-<pod-template-hash>`` and gets
``spec.replicas``; older ones are scaled to zero (a rollout without surge). Pods carry the
``pod-template-hash`` label; the ReplicaSet is owned by the Deployment (``controller: true``).
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import TYPE_CHECKING, Any

from kubesim import objects, workload_objects
from kubesim.controllers.base import (
    OwnerController,
    owned_by,
    owner_reference,
    write_status,
)
from kubesim.entries import Entry
from kubesim.resources import DEPLOYMENTS, REPLICASETS

if TYPE_CHECKING:
    from kubesim.protocols import SimCluster

HASH_LABEL = "pod-template-hash"
_SAFE = "bcdfghjklmnpqrstvwxz2456789"


def template_hash(template: dict[str, Any]) -> str:
    """A short, stable, DNS-safe hash of the pod template (like the controller's)."""
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).digest()
    return "".join(_SAFE[b % len(_SAFE)] for b in digest[:10])


class DeploymentController(OwnerController):
    KIND = "Deployment"

    def sync(self, cluster: SimCluster, namespace: str, name: str) -> None:
        entry = cluster.store.get(DEPLOYMENTS, namespace, name)
        if entry is None or entry.meta.get("deletionTimestamp"):
            return
        spec = entry.obj.get("spec") or {}
        template = spec.get("template") or {}
        pod_hash = template_hash(template)
        replicas = int(spec.get("replicas", 1))
        owned = owned_by(cluster, REPLICASETS, entry)
        current = next((rs for rs in owned if rs.meta["name"] == f"{name}-{pod_hash}"), None)
        if current is None:
            current = self._new_replicaset(cluster, entry, template, pod_hash, replicas)
        elif int(current.obj["spec"].get("replicas", 0)) != replicas:
            current = self._scale(cluster, current, replicas)
        for old in owned:
            if old.meta["name"] != current.meta["name"] and old.obj["spec"].get("replicas"):
                self._scale(cluster, old, 0)
        self._status(cluster, entry, owned_by(cluster, REPLICASETS, entry), current)

    def _new_replicaset(
        self,
        cluster: SimCluster,
        deployment: Entry,
        template: dict[str, Any],
        pod_hash: str,
        replicas: int,
    ) -> Entry:
        pod_template = copy.deepcopy(template)
        labels = {**(pod_template.get("metadata", {}).get("labels") or {}), HASH_LABEL: pod_hash}
        pod_template.setdefault("metadata", {})["labels"] = labels
        selector = copy.deepcopy(deployment.obj["spec"].get("selector") or {})
        selector.setdefault("matchLabels", {})[HASH_LABEL] = pod_hash
        namespace, name = deployment.meta["namespace"], deployment.meta["name"]
        obj = workload_objects.default_replicaset(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": objects.meta(
                    f"{name}-{pod_hash}",
                    namespace,
                    labels=labels,
                    ownerReferences=[owner_reference(deployment)],
                    annotations={"deployment.kubernetes.io/revision": "1"},
                ),
                "spec": {"replicas": replicas, "selector": selector, "template": pod_template},
            }
        )
        return cluster.store.create(REPLICASETS, obj)

    @staticmethod
    def _scale(cluster: SimCluster, rs: Entry, replicas: int) -> Entry:
        obj = rs.copy()
        obj["spec"]["replicas"] = replicas
        obj["metadata"]["generation"] = int(obj["metadata"].get("generation", 1)) + 1
        return cluster.store.put(REPLICASETS, obj)

    @staticmethod
    def _status(cluster: SimCluster, entry: Entry, owned: list[Entry], current: Entry) -> None:
        def total(field: str, sets: list[Entry]) -> int:
            return sum(int(rs.obj.get("status", {}).get(field, 0)) for rs in sets)

        wanted = int(entry.obj["spec"].get("replicas", 1))
        available = total("availableReplicas", owned)
        replicas = total("replicas", owned)
        now = cluster.now()
        ok = available >= wanted
        conditions = [
            {
                "type": "Available",
                "status": "True" if ok else "False",
                "reason": "MinimumReplicasAvailable" if ok else "MinimumReplicasUnavailable",
                "message": "Deployment has minimum availability."
                if ok
                else "Deployment does not have minimum availability.",
                "lastUpdateTime": now,
                "lastTransitionTime": now,
            }
        ]
        old = {c.get("type"): c for c in entry.obj.get("status", {}).get("conditions") or []}
        for cond in conditions:
            previous = old.get(cond["type"])
            if previous is not None and previous.get("status") == cond["status"]:
                cond["lastTransitionTime"] = previous.get("lastTransitionTime", now)
                cond["lastUpdateTime"] = previous.get("lastUpdateTime", now)
        write_status(
            cluster,
            DEPLOYMENTS,
            entry,
            {
                "observedGeneration": entry.meta.get("generation", 1),
                "replicas": replicas,
                "updatedReplicas": int(current.obj.get("status", {}).get("replicas", 0)),
                "readyReplicas": total("readyReplicas", owned),
                "availableReplicas": available,
                "unavailableReplicas": max(0, replicas - available),
                "conditions": conditions,
            },
        )
