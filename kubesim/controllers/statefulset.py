"""The StatefulSet controller: pods ``<set>-0`` .. ``<set>-(n-1)``, each name back only after
the previous pod of that name is gone (so an evicted pod returns once its kubelet finished it).

``OrderedReady`` (the default) creates ordinal i only when every lower one is Running and
Ready; ``Parallel`` creates them all. ``volumeClaimTemplates`` give each pod its own claim
``<template>-<set>-<i>``, created once and kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesim import objects
from kubesim.controllers.base import (
    OwnerController,
    active,
    create_from_template,
    owned_by,
    write_status,
)
from kubesim.controllers.deployment import template_hash
from kubesim.entries import Entry
from kubesim.pod_objects import pod_ready
from kubesim.resources import PODS, PVCS, STATEFULSETS

if TYPE_CHECKING:
    from kubesim.protocols import SimCluster


class StatefulSetController(OwnerController):
    KIND = "StatefulSet"

    def sync(self, cluster: SimCluster, namespace: str, name: str) -> None:
        entry = cluster.store.get(STATEFULSETS, namespace, name)
        if entry is None or entry.meta.get("deletionTimestamp"):
            return
        spec = entry.obj.get("spec") or {}
        replicas = int(spec.get("replicas", 1))
        ordered = spec.get("podManagementPolicy", "OrderedReady") == "OrderedReady"
        revision = f"{name}-{template_hash(spec.get('template') or {})}"
        for ordinal in range(replicas):
            pod = cluster.store.get(PODS, namespace, f"{name}-{ordinal}")
            if pod is None:
                pod = self._create(cluster, entry, ordinal, revision)
                if pod is None or ordered:
                    break
            elif ordered and not (active(pod.obj) and pod_ready(pod.obj)):
                break
        for pod_entry in owned_by(cluster, PODS, entry):
            ordinal_text = pod_entry.meta["name"].rsplit("-", 1)[-1]
            too_high = not ordinal_text.isdigit() or int(ordinal_text) >= replicas
            if too_high and active(pod_entry.obj):
                cluster.delete_pod(namespace, pod_entry.meta["name"])
        live = [e.obj for e in owned_by(cluster, PODS, entry) if active(e.obj)]
        ready = sum(1 for p in live if pod_ready(p))
        write_status(
            cluster,
            STATEFULSETS,
            entry,
            {
                "observedGeneration": entry.meta.get("generation", 1),
                "replicas": len(live),
                "readyReplicas": ready,
                "availableReplicas": ready,
                "currentReplicas": len(live),
                "updatedReplicas": len(live),
                "currentRevision": revision,
                "updateRevision": revision,
            },
        )

    def _create(self, cluster: SimCluster, sts: Entry, ordinal: int, revision: str) -> Entry | None:
        name = f"{sts.meta['name']}-{ordinal}"
        claims = [self._claim(cluster, sts, t, ordinal) for t in self._templates(sts)]

        def add_volumes(spec: dict[str, Any]) -> None:
            volumes = spec.setdefault("volumes", [])
            names = {v.get("name") for v in volumes}
            for template_name, claim in claims:
                if template_name not in names:
                    volumes.append(
                        {"name": template_name, "persistentVolumeClaim": {"claimName": claim}}
                    )
            spec.setdefault("hostname", name)
            if sts.obj["spec"].get("serviceName"):
                spec.setdefault("subdomain", sts.obj["spec"]["serviceName"])

        labels = {
            "statefulset.kubernetes.io/pod-name": name,
            "apps.kubernetes.io/pod-index": str(ordinal),
            "controller-revision-hash": revision,
        }
        template = sts.obj["spec"].get("template") or {}
        return create_from_template(
            cluster, sts, template, name=name, extra_labels=labels, spec_changes=add_volumes
        )

    @staticmethod
    def _templates(sts: Entry) -> list[dict[str, Any]]:
        return list(sts.obj["spec"].get("volumeClaimTemplates") or [])

    @staticmethod
    def _claim(
        cluster: SimCluster, sts: Entry, template: dict[str, Any], ordinal: int
    ) -> tuple[str, str]:
        template_name = template.get("metadata", {}).get("name", "data")
        claim = f"{template_name}-{sts.meta['name']}-{ordinal}"
        namespace = sts.meta["namespace"]
        if cluster.store.get(PVCS, namespace, claim) is None:
            labels = dict(sts.obj["spec"].get("selector", {}).get("matchLabels") or {})
            obj = {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": objects.meta(claim, namespace, labels=labels or None),
                "spec": dict(template.get("spec") or {}),
                "status": {"phase": "Pending"},
            }
            cluster.store.create(PVCS, obj)
        return template_name, claim
