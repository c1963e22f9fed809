"""Builders of complete API objects, and the defaults the API server fills in on create.

Every object served must be complete: the official client (37) refuses an object missing
a required field (for example any ``status.nodeInfo`` field of a Node).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping
from typing import Any

from kubesim.hosts import CONTROL_PLANE_LABEL, Host

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"

GO_VERSIONS = {
    27: "go1.20.10",
    28: "go1.20.13",
    29: "go1.21.13",
    30: "go1.22.12",
    31: "go1.22.12",
    32: "go1.23.6",
    33: "go1.24.2",
    34: "go1.24.6",
    35: "go1.25.3",
    36: "go1.25.5",
}


def parse_version(version: str) -> tuple[int, int, int]:
    m = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?", version)
    if not m:
        raise ValueError(f"not a Kubernetes version: {version!r}")
    return int(m[1]), int(m[2]), int(m[3] or 0)


def meta(name: str, namespace: str | None = None, **extra: Any) -> dict[str, Any]:
    result: dict[str, Any] = {"name": name}
    if namespace is not None:
        result["namespace"] = namespace
    result.update({k: v for k, v in extra.items() if v is not None})
    return result


def b64(data: bytes | str) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return base64.b64encode(raw).decode()


def unb64(data: str) -> bytes:
    return base64.b64decode(data)


# ---- /version ---------------------------------------------------------------------------
def version_info(version: str, architecture: str = "amd64") -> dict[str, str]:
    major, minor, patch = parse_version(version)
    commit = hashlib.sha1(version.encode()).hexdigest()
    info = {
        "major": str(major),
        "minor": str(minor),
        "gitVersion": version if version.startswith("v") else "v" + version,
        "gitCommit": commit,
        "gitTreeState": "clean",
        "buildDate": f"2025-{(minor % 12) + 1:02d}-{(patch % 27) + 1:02d}T10:11:12Z",
        "goVersion": GO_VERSIONS.get(minor, "go1.25.5"),
        "compiler": "gc",
        "platform": f"linux/{architecture}",
    }
    if (major, minor) >= (1, 31):
        info.update(
            emulationMajor=str(major),
            emulationMinor=str(minor),
            minCompatibilityMajor=str(major),
            minCompatibilityMinor=str(minor - 1),
        )
    return info


# ---- namespaces -------------------------------------------------------------------------
def namespace_object(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": meta(name, labels=labels or {})}
    return default_namespace(obj)


def default_namespace(obj: dict[str, Any]) -> dict[str, Any]:
    name = obj["metadata"]["name"]
    obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = name
    obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
    obj["status"] = {"phase": "Active"}
    return obj


# ---- nodes ------------------------------------------------------------------------------
def node_labels(host: Host, extra: dict[str, str] | None = None) -> dict[str, str]:
    labels = {
        "beta.kubernetes.io/arch": host.architecture,
        "beta.kubernetes.io/os": host.operating_system,
        "kubernetes.io/arch": host.architecture,
        "kubernetes.io/hostname": host.name,
        "kubernetes.io/os": host.operating_system,
    }
    if host.role == "control-plane":
        labels[CONTROL_PLANE_LABEL] = ""
        labels["node.kubernetes.io/exclude-from-external-load-balancers"] = ""
    labels.update(extra or {})
    return labels


def control_plane_taint() -> dict[str, Any]:
    return {"key": CONTROL_PLANE_LABEL, "effect": "NoSchedule"}


def node_object(
    host: Host,
    pod_cidr: str,
    state: str,
    now: str,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, Any]] | None = None,
    unschedulable: bool = False,
) -> dict[str, Any]:
    """A Node as kubeadm + kubelet register it; ``state`` is ready, not-ready or unknown."""
    all_taints = [control_plane_taint()] if host.role == "control-plane" else []
    all_taints += list(taints or [])
    spec: dict[str, Any] = {"podCIDR": pod_cidr, "podCIDRs": [pod_cidr]}
    if unschedulable:
        spec["unschedulable"] = True
        all_taints.append({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule", "timeAdded": now})
    spec["taints"] = all_taints
    obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta(
            host.name,
            labels=node_labels(host, labels),
            annotations={
                "kubeadm.alpha.kubernetes.io/cri-socket": host.runtime_socket,
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        ),
        "spec": spec,
        "status": node_status(host, now),
    }
    set_node_state(obj, state, now)
    return obj


def node_info(host: Host) -> dict[str, str]:
    major_minor = parse_version(host.kubelet_version)[:2]
    return {
        "architecture": host.architecture,
        "bootID": host.boot_id,
        "containerRuntimeVersion": host.container_runtime,
        "kernelVersion": host.kernel_version,
        # kubelets from 1.31 on stop reporting it (KEP-4004); the field is still serialised.
        "kubeProxyVersion": "" if major_minor >= (1, 31) else host.kubelet_version,
        "kubeletVersion": host.kubelet_version,
        "machineID": host.machine_id,
        "operatingSystem": host.operating_system,
        "osImage": host.os_image,
        "systemUUID": host.system_uuid,
    }


def node_status(host: Host, now: str) -> dict[str, Any]:
    capacity = {
        "cpu": "4",
        "ephemeral-storage": "40852Mi",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": "16104496Ki",
        "pods": "110",
    }
    allocatable = dict(capacity, **{"ephemeral-storage": "38553623020", "memory": "16002096Ki"})
    return {
        "addresses": [
            {"type": "InternalIP", "address": host.internal_ip},
            {"type": "Hostname", "address": host.name},
        ],
        "allocatable": allocatable,
        "capacity": capacity,
        "conditions": [],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": node_info(host),
    }


_CONDITIONS = (
    (
        "MemoryPressure",
        "False",
        "KubeletHasSufficientMemory",
        "kubelet has sufficient memory available",
    ),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
)


def node_conditions(state: str, now: str, previous: list[dict[str, Any]]) -> list[dict[str, Any]]:
    before = {c.get("type"): c for c in previous}
    rows = []
    for ctype, status, reason, message in _CONDITIONS:
        if state == "unknown":
            status, reason, message = (
                "Unknown",
                "NodeStatusUnknown",
                "Kubelet stopped posting node status.",
            )
        rows.append((ctype, status, reason, message))
    if state == "ready":
        rows.append(("Ready", "True", "KubeletReady", "kubelet is posting ready status"))
    elif state == "not-ready":
        rows.append(
            (
                "Ready",
                "False",
                "KubeletNotReady",
                "container runtime network not ready: NetworkReady=false "
                "reason:NetworkPluginNotReady message:Network plugin returns error: "
                "no CNI configuration file in /etc/cni/net.d/. Has your network provider started?",
            )
        )
    else:
        rows.append(
            ("Ready", "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")
        )
    result = []
    for ctype, status, reason, message in rows:
        prev = before.get(ctype, {})
        heartbeat = prev.get("lastHeartbeatTime", now) if state == "unknown" else now
        transition = prev.get("lastTransitionTime", now) if prev.get("status") == status else now
        result.append(
            {
                "type": ctype,
                "status": status,
                "lastHeartbeatTime": heartbeat,
                "lastTransitionTime": transition,
                "reason": reason,
                "message": message,
            }
        )
    return result


def node_state(obj: dict[str, Any]) -> str:
    for cond in obj.get("status", {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return {"True": "ready", "False": "not-ready"}.get(cond.get("status", ""), "unknown")
    return "unknown"


def set_node_state(obj: dict[str, Any], state: str, now: str) -> None:
    """Conditions and the node-lifecycle taints that go with ``state``."""
    status = obj.setdefault("status", {})
    status["conditions"] = node_conditions(state, now, status.get("conditions") or [])
    spec = obj.setdefault("spec", {})
    taints = [
        t
        for t in spec.get("taints") or []
        if t.get("key") not in (NOT_READY_TAINT, UNREACHABLE_TAINT)
    ]
    if state == "not-ready":
        taints.append({"key": NOT_READY_TAINT, "effect": "NoSchedule"})
    elif state == "unknown":
        taints.append({"key": UNREACHABLE_TAINT, "effect": "NoSchedule"})
        taints.append({"key": UNREACHABLE_TAINT, "effect": "NoExecute", "timeAdded": now})
    spec["taints"] = taints
    if not taints:
        spec.pop("taints")


def is_control_plane(node: dict[str, Any]) -> bool:
    return CONTROL_PLANE_LABEL in (node["metadata"].get("labels") or {})


def default_node(obj: dict[str, Any], now: str) -> dict[str, Any]:
    """A Node created through the API: complete status and the not-ready taint."""
    spec = obj.setdefault("spec", {})
    taints = spec.setdefault("taints", [])
    if not any(t.get("key") == NOT_READY_TAINT for t in taints):
        taints.append({"key": NOT_READY_TAINT, "effect": "NoSchedule"})
    status = obj.setdefault("status", {})
    info = status.setdefault("nodeInfo", {})
    for key in (
        "architecture",
        "bootID",
        "containerRuntimeVersion",
        "kernelVersion",
        "kubeProxyVersion",
        "kubeletVersion",
        "machineID",
        "operatingSystem",
        "osImage",
        "systemUUID",
    ):
        info.setdefault(key, "")
    status.setdefault("daemonEndpoints", {"kubeletEndpoint": {"Port": 0}})
    return obj


# ---- pods -------------------------------------------------------------------------------
DEFAULT_TOLERATIONS = [
    {"key": NOT_READY_TAINT, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {
        "key": UNREACHABLE_TAINT,
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
]


def default_pod(obj: dict[str, Any]) -> dict[str, Any]:
    """Defaults and admission the API server applies to a new Pod."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("serviceAccountName", spec.get("serviceAccount") or "default")
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    spec.setdefault("priority", 0)
    tolerations = spec.setdefault("tolerations", [])
    for default in DEFAULT_TOLERATIONS:
        covered = any(
            t.get("key") in (default["key"], None, "")
            and t.get("effect") in ("NoExecute", None, "")
            and t.get("operator") == "Exists"
            for t in tolerations
        )
        if not covered:
            tolerations.append(dict(default))
    for container in spec.get("containers") or []:
        _default_container(container)
    for container in spec.get("initContainers") or []:
        _default_container(container)
    status = obj.setdefault("status", {})
    status.setdefault("phase", "Pending")
    status.setdefault("qosClass", "BestEffort")
    if spec.get("nodeName"):
        status.setdefault("conditions", [])
    return obj


def _default_container(container: dict[str, Any]) -> None:
    image = container.get("image") or ""
    latest = ":" not in image.rsplit("/", 1)[-1] or image.endswith(":latest")
    container.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
    container.setdefault("resources", {})
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")


def pod_object(
    namespace: str,
    name: str,
    node: str | None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    owner: dict[str, Any] | None = None,
    empty_dir: bool = False,
    image: str = "registry.k8s.io/pause:3.10",
) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": image}]}
    if node:
        spec["nodeName"] = node
    if empty_dir:
        spec["volumes"] = [{"name": "scratch", "emptyDir": {}}]
        spec["containers"][0]["volumeMounts"] = [{"name": "scratch", "mountPath": "/scratch"}]
    obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta(
            name,
            namespace,
            labels=labels or {},
            annotations=annotations or None,
            ownerReferences=[owner] if owner else None,
        ),
        "spec": spec,
    }
    return default_pod(obj)


def pod_ready(obj: dict[str, Any]) -> bool:
    for cond in obj.get("status", {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return bool(cond.get("status") == "True")
    return False


def pod_healthy(obj: dict[str, Any]) -> bool:
    """Counts towards a disruption budget: Running, Ready and not terminating."""
    return (
        obj.get("status", {}).get("phase") == "Running"
        and pod_ready(obj)
        and not obj["metadata"].get("deletionTimestamp")
    )


def _container_id(host_runtime: str, seed: str) -> str:
    scheme = host_runtime.split("://", 1)[0] or "cri-o"
    return f"{scheme}://{hashlib.sha256(seed.encode()).hexdigest()}"


def _image_id(image: str) -> str:
    repo = image.split(":", 1)[0]
    return f"{repo}@sha256:{hashlib.sha256(image.encode()).hexdigest()}"


def _conditions(now: str, ready: bool, scheduled: bool = True) -> list[dict[str, Any]]:
    status = "True" if ready else "False"
    rows = [
        ("PodReadyToStartContainers", status),
        ("Initialized", "True"),
        ("Ready", status),
        ("ContainersReady", status),
        ("PodScheduled", "True" if scheduled else "False"),
    ]
    return [
        {"type": t, "status": s, "lastProbeTime": None, "lastTransitionTime": now} for t, s in rows
    ]


def set_pod_running(obj: dict[str, Any], host: Host | None, pod_ip: str, now: str) -> None:
    """The kubelet started every container and reports the pod Running and Ready."""
    runtime = host.container_runtime if host else "cri-o://1.31.1"
    status = obj.setdefault("status", {})
    status.update(
        phase="Running",
        conditions=_conditions(now, ready=True),
        startTime=status.get("startTime") or now,
        podIP=pod_ip,
        podIPs=[{"ip": pod_ip}],
    )
    if host is not None:
        status["hostIP"] = host.internal_ip
        status["hostIPs"] = [{"ip": host.internal_ip}]
    status["containerStatuses"] = [
        {
            "name": c.get("name", ""),
            "image": c.get("image", ""),
            "imageID": _image_id(c.get("image", "")),
            "containerID": _container_id(
                runtime, obj["metadata"].get("uid", "") + c.get("name", "")
            ),
            "ready": True,
            "started": True,
            "restartCount": 0,
            "state": {"running": {"startedAt": now}},
            "lastState": {},
        }
        for c in obj.get("spec", {}).get("containers") or []
    ]


def set_pod_finished(
    obj: dict[str, Any], host: Host | None, now: str, succeeded: bool, message: str = ""
) -> None:
    """All containers exited: Succeeded (exit 0) or Failed (exit 1, with ``message``)."""
    runtime = host.container_runtime if host else "cri-o://1.31.1"
    status = obj.setdefault("status", {})
    status.update(phase="Succeeded" if succeeded else "Failed", conditions=_conditions(now, False))
    status.setdefault("startTime", now)
    if host is not None:
        status["hostIP"] = host.internal_ip
        status["hostIPs"] = [{"ip": host.internal_ip}]
    if message:
        status["message"] = message
        status["reason"] = "Error"
    terminated = {
        "exitCode": 0 if succeeded else 1,
        "reason": "Completed" if succeeded else "Error",
        "startedAt": status["startTime"],
        "finishedAt": now,
    }
    if message:
        terminated["message"] = message
    status["containerStatuses"] = [
        {
            "name": c.get("name", ""),
            "image": c.get("image", ""),
            "imageID": _image_id(c.get("image", "")),
            "containerID": _container_id(
                runtime, obj["metadata"].get("uid", "") + c.get("name", "")
            ),
            "ready": False,
            "started": False,
            "restartCount": 0,
            "state": {"terminated": dict(terminated)},
            "lastState": {},
        }
        for c in obj.get("spec", {}).get("containers") or []
    ]


def set_pod_scheduled(obj: dict[str, Any], now: str) -> None:
    status = obj.setdefault("status", {})
    conditions = status.setdefault("conditions", [])
    if not any(c.get("type") == "PodScheduled" for c in conditions):
        conditions.append(
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": now,
            }
        )


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


# ---- config -----------------------------------------------------------------------------
def configmap_object(namespace: str, name: str, data: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta(name, namespace),
        "data": dict(data),
    }


def secret_object(
    namespace: str, name: str, data: Mapping[str, bytes | str], type_: str = "Opaque"
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": meta(name, namespace),
        "type": type_,
        "data": {k: b64(v) for k, v in data.items()},
    }


def default_secret(obj: dict[str, Any]) -> dict[str, Any]:
    obj.setdefault("type", "Opaque")
    string_data = obj.pop("stringData", None) or {}
    if string_data:
        data = obj.setdefault("data", {}) or {}
        obj["data"] = data
        for key, value in string_data.items():
            data[key] = b64(value)
    return obj


def secret_values(obj: dict[str, Any]) -> dict[str, str]:
    """A Secret's data, decoded (undecodable values are skipped)."""
    values = {}
    for key, value in (obj.get("data") or {}).items():
        try:
            values[key] = unb64(value).decode()
        except (ValueError, UnicodeDecodeError):
            continue
    return values
