"""The ReplicaSet controller: keeps ``spec.replicas`` active pods from the template.

As the real one: terminating and finished pods do not count, so an evicted pod is replaced at
once (the replacement is new, named ``<replicaset>-<5 random>``). A template that sets
``spec.nodeName`` puts the replacement straight on that node, cordoned or not: the scheduler
never sees a pod that names its node, and the kubelet runs it. Surplus pods go first when
unscheduled, then not ready. A ReplicaSet without a pod template (made by ``Cluster.add_pod``
as a bare owner) is left alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesim.controllers.base import (
    OwnerController,
    active,
    create_from_template,
    owned_by,
    write_status,
)
from kubesim.pod_objects import pod_ready
from kubesim.resources import PODS, REPLICASETS

if TYPE_CHECKING:
    from kubesim.protocols import SimCluster


def _deletion_rank(pod: dict[str, Any]) -> tuple[int, int]:
    return (1 if pod.get("spec", {}).get("nodeName") else 0, 1 if pod_ready(pod) else 0)


class ReplicaSetController(OwnerController):
    KIND = "ReplicaSet"

    def sync(self, cluster: SimCluster, namespace: str, name: str) -> None:
        entry = cluster.store.get(REPLICASETS, namespace, name)
        if entry is None or entry.meta.get("deletionTimestamp"):
            return
        spec = entry.obj.get("spec") or {}
        template = spec.get("template")
        if not template:
            return  # a bare owner made by SimCluster.add_pod: nothing to keep
        live = [e.obj for e in owned_by(cluster, PODS, entry) if active(e.obj)]
        wanted = int(spec.get("replicas", 1))
        for _ in range(wanted - len(live)):
            created = create_from_template(cluster, entry, template, generate_name=f"{name}-")
            if created is None:
                break
            live.append(created.obj)
        if len(live) > wanted:
            for pod in sorted(live, key=_deletion_rank)[: len(live) - wanted]:
                cluster.delete_pod(namespace, pod["metadata"]["name"])
                live.remove(pod)
        ready = sum(1 for p in live if pod_ready(p))
        labelled = sum(
            1
            for p in live
            if all(
                (p["metadata"].get("labels") or {}).get(k) == v
                for k, v in (template.get("metadata", {}).get("labels") or {}).items()
            )
        )
        write_status(
            cluster,
            REPLICASETS,
            entry,
            {
                "replicas": len(live),
                "fullyLabeledReplicas": labelled,
                "readyReplicas": ready,
                "availableReplicas": ready,
                "observedGeneration": entry.meta.get("generation", 1),
            },
        )
