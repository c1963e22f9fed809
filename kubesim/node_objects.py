"""Node objects as a kubelet registers them: labels, status, conditions, lifecycle taints."""

from __future__ import annotations

from typing import Any

from kubesim.hosts import CONTROL_PLANE_LABEL, Host
from kubesim.objects import meta, parse_version

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"


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
    pod_cidrs: list[str],
    state: str,
    now: str,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, Any]] | None = None,
    unschedulable: bool = False,
) -> dict[str, Any]:
    """A Node as kubeadm + kubelet register it; ``state`` is ready, not-ready or unknown."""
    all_taints = [control_plane_taint()] if host.role == "control-plane" else []
    all_taints += list(taints or [])
    # the controller manager's range allocator gives them (kubesim.node_ipam); none when used up
    spec: dict[str, Any] = {"podCIDR": pod_cidrs[0], "podCIDRs": pod_cidrs} if pod_cidrs else {}
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
