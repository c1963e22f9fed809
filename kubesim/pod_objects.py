"""Pod objects and their defaults, and the status a kubelet reports as a pod runs and ends."""

from __future__ import annotations

import hashlib
from typing import Any

from kubesim.hosts import Host
from kubesim.node_objects import NOT_READY_TAINT, UNREACHABLE_TAINT
from kubesim.objects import meta

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"

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


def set_pod_waiting(obj: dict[str, Any], reason: str, message: str) -> None:
    """Still Pending: the kubelet cannot start the containers yet (image pull, sandbox)."""
    status = obj.setdefault("status", {})
    waiting = {"reason": reason, **({"message": message} if message else {})}
    status["containerStatuses"] = [
        {
            "name": c.get("name", ""),
            "image": c.get("image", ""),
            "imageID": "",
            "ready": False,
            "started": False,
            "restartCount": 0,
            "state": {"waiting": dict(waiting)},
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
