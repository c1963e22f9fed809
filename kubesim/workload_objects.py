"""Budgets and workloads (DaemonSets, Deployments, StatefulSets, Jobs, ReplicaSets) and
volumes: the objects as built and the defaults the API server fills in."""

from __future__ import annotations

from typing import Any

from kubesim.objects import meta
from kubesim.pod_objects import _default_container


# ---- policy and apps --------------------------------------------------------------------
def pdb_object(
    namespace: str,
    name: str,
    selector_labels: dict[str, str],
    min_available: int | str | None = None,
    max_unavailable: int | str | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"selector": {"matchLabels": dict(selector_labels)}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    return default_pdb(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": meta(name, namespace),
            "spec": spec,
        }
    )


def default_pdb(obj: dict[str, Any]) -> dict[str, Any]:
    status = obj.setdefault("status", {})
    for key in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
        status.setdefault(key, 0)
    return obj


def daemonset_object(namespace: str, name: str, labels: dict[str, str]) -> dict[str, Any]:
    return default_daemonset(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": meta(name, namespace, labels=dict(labels)),
            "spec": {
                "selector": {"matchLabels": dict(labels)},
                "template": {
                    "metadata": {"labels": dict(labels)},
                    "spec": {
                        "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}]
                    },
                },
            },
        }
    )


def default_daemonset(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.setdefault("spec", {})
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault(
        "updateStrategy",
        {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
    )
    status = obj.setdefault("status", {})
    for key in (
        "currentNumberScheduled",
        "desiredNumberScheduled",
        "numberMisscheduled",
        "numberReady",
    ):
        status.setdefault(key, 0)
    return obj


def default_deployment(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    spec.setdefault(
        "strategy",
        {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
    )
    _default_template(spec)
    obj.setdefault("status", {})
    return obj


def default_statefulset(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    _default_template(spec)
    obj.setdefault("status", {}).setdefault("replicas", 0)
    return obj


def default_job(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.setdefault("spec", {})
    spec.setdefault("parallelism", 1)
    spec.setdefault("completions", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    template = spec.setdefault("template", {})
    template.setdefault("spec", {}).setdefault("restartPolicy", "Never")
    _default_template(spec)
    obj.setdefault("status", {})
    return obj


def _default_template(spec: dict[str, Any]) -> None:
    template_spec = spec.setdefault("template", {}).setdefault("spec", {})
    template_spec.setdefault("restartPolicy", "Always")
    template_spec.setdefault("terminationGracePeriodSeconds", 30)
    template_spec.setdefault("dnsPolicy", "ClusterFirst")
    template_spec.setdefault("schedulerName", "default-scheduler")
    template_spec.setdefault("securityContext", {})
    for container in template_spec.get("containers") or []:
        _default_container(container)


def default_persistent_volume(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.setdefault("spec", {})
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")
    obj.setdefault("status", {}).setdefault("phase", "Available")
    return obj


def default_claim(obj: dict[str, Any]) -> dict[str, Any]:
    obj.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
    obj.setdefault("status", {}).setdefault("phase", "Pending")
    return obj


def default_replicaset(obj: dict[str, Any]) -> dict[str, Any]:
    obj.setdefault("spec", {}).setdefault("replicas", 1)
    obj.setdefault("status", {}).setdefault("replicas", 0)
    return obj
