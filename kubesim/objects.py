"""Builders of complete API objects, and the defaults the API server fills in on create:
the shared metadata helpers, /version, namespaces, ConfigMaps and Secrets. Nodes, pods and
workloads have modules of their own (node_objects, pod_objects, workload_objects).

Every object served must be complete: the official client (37) refuses an object missing
a required field (for example any ``status.nodeInfo`` field of a Node).
"""

from __future__ import annotations

import base64
import hashlib
import re
import time
import uuid
from collections.abc import Mapping
from typing import Any

from kubesim.clock import rfc3339

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


# ---- events -----------------------------------------------------------------------------
def event_object(
    namespace: str, kind: str, name: str, uid: str, reason: str, message: str
) -> dict[str, Any]:
    """A core/v1 Event about one object, as the kubelet or a controller records it."""
    now = rfc3339(time.time())
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": meta(f"{name}.{uuid.uuid4().hex[:16]}", namespace),
        "involvedObject": {
            "apiVersion": "v1",
            "kind": kind,
            "name": name,
            "namespace": namespace,
            "uid": uid,
        },
        "reason": reason,
        "message": message,
        "type": "Warning",
        "count": 1,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "source": {"component": "kubelet"},
        "reportingComponent": "kubelet",
    }


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
