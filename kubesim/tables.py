"""Server-side printing: the ``meta.k8s.io/v1`` Table a client gets when it asks for
``Accept: application/json;as=Table;v=v1;g=meta.k8s.io`` (as ``kubectl get`` does), with the
columns the API server's printers give each kind and a Name/Created At table for the rest."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubesim.clock import parse_rfc3339
from kubesim.node_objects import node_state
from kubesim.pod_objects import pod_ready

Row = list[Any]
Column = tuple[str, str, int]  # name, type, priority (1: only with -o wide)


def wants_table(accept: str) -> bool:
    for part in accept.split(","):
        params = {p.split("=", 1)[0].strip(): p.split("=", 1)[-1].strip() for p in part.split(";")}
        if (params.get("as"), params.get("g")) == ("Table", "meta.k8s.io") and params.get("v") in (
            "v1",
            "v1beta1",
        ):
            return True
    return False


def human_duration(seconds: float) -> str:
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 192:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    days = hours // 24
    if days < 365 * 2:
        return f"{days}d"
    years = days // 365
    if years < 8:
        return f"{years}y{days % 365}d" if days % 365 else f"{years}y"
    return f"{years}y"


def _age(obj: dict[str, Any], now: float) -> str:
    created = parse_rfc3339(obj["metadata"].get("creationTimestamp", ""))
    return "<unknown>" if created is None else human_duration(now - created)


def _or_none(value: Any) -> Any:
    return "<none>" if value in (None, "", []) else value


def _node_row(obj: dict[str, Any], now: float) -> Row:
    status = {"ready": "Ready", "not-ready": "NotReady"}.get(node_state(obj), "Unknown")
    if obj.get("spec", {}).get("unschedulable"):
        status += ",SchedulingDisabled"
    prefix = "node-role.kubernetes.io/"
    roles = sorted(
        k[len(prefix) :] for k in obj["metadata"].get("labels") or {} if k.startswith(prefix)
    )
    info = obj.get("status", {}).get("nodeInfo") or {}
    addresses = {
        a.get("type"): a.get("address") for a in obj.get("status", {}).get("addresses") or []
    }
    return [
        obj["metadata"]["name"],
        status,
        ",".join(roles) or "<none>",
        _age(obj, now),
        info.get("kubeletVersion", ""),
        _or_none(addresses.get("InternalIP")),
        _or_none(addresses.get("ExternalIP")),
        info.get("osImage", ""),
        info.get("kernelVersion", ""),
        info.get("containerRuntimeVersion", ""),
    ]


def _pod_row(obj: dict[str, Any], now: float) -> Row:
    status = obj.get("status") or {}
    containers = obj.get("spec", {}).get("containers") or []
    statuses = status.get("containerStatuses") or []
    ready = sum(1 for c in statuses if c.get("ready"))
    reason = status.get("reason") or status.get("phase", "")
    if obj["metadata"].get("deletionTimestamp"):
        reason = "Terminating"
    elif status.get("phase") == "Running" and not pod_ready(obj):
        reason = "NotReady" if ready < len(containers) else "Running"
    restarts = sum(int(c.get("restartCount", 0)) for c in statuses)
    return [
        obj["metadata"]["name"],
        f"{ready}/{len(containers)}",
        reason,
        str(restarts),
        _age(obj, now),
        _or_none(status.get("podIP")),
        _or_none(obj.get("spec", {}).get("nodeName")),
        _or_none(status.get("nominatedNodeName")),
        "<none>",
    ]


def _pdb_row(obj: dict[str, Any], now: float) -> Row:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    min_available = spec.get("minAvailable")
    max_unavailable = spec.get("maxUnavailable")
    return [
        obj["metadata"]["name"],
        "N/A" if min_available is None else str(min_available),
        "N/A" if max_unavailable is None else str(max_unavailable),
        int(status.get("disruptionsAllowed", 0)),
        _age(obj, now),
    ]


def _deployment_row(obj: dict[str, Any], now: float) -> Row:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [
        obj["metadata"]["name"],
        f"{int(status.get('readyReplicas', 0))}/{int(spec.get('replicas', 0))}",
        int(status.get("updatedReplicas", 0)),
        int(status.get("availableReplicas", 0)),
        _age(obj, now),
    ]


def _replicaset_row(obj: dict[str, Any], now: float) -> Row:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [
        obj["metadata"]["name"],
        int(spec.get("replicas", 0)),
        int(status.get("replicas", 0)),
        int(status.get("readyReplicas", 0)),
        _age(obj, now),
    ]


def _statefulset_row(obj: dict[str, Any], now: float) -> Row:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    ready = f"{int(status.get('readyReplicas', 0))}/{int(spec.get('replicas', 0))}"
    return [obj["metadata"]["name"], ready, _age(obj, now)]


def _namespace_row(obj: dict[str, Any], now: float) -> Row:
    return [obj["metadata"]["name"], obj.get("status", {}).get("phase", ""), _age(obj, now)]


def _default_row(obj: dict[str, Any], now: float) -> Row:
    return [obj["metadata"]["name"], obj["metadata"].get("creationTimestamp", "")]


_S, _I = "string", "integer"
PRINTERS: dict[str, tuple[list[Column], Callable[[dict[str, Any], float], Row]]] = {
    "Node": (
        [
            ("Name", _S, 0),
            ("Status", _S, 0),
            ("Roles", _S, 0),
            ("Age", _S, 0),
            ("Version", _S, 0),
            ("Internal-IP", _S, 1),
            ("External-IP", _S, 1),
            ("OS-Image", _S, 1),
            ("Kernel-Version", _S, 1),
            ("Container-Runtime", _S, 1),
        ],
        _node_row,
    ),
    "Pod": (
        [
            ("Name", _S, 0),
            ("Ready", _S, 0),
            ("Status", _S, 0),
            ("Restarts", _S, 0),
            ("Age", _S, 0),
            ("IP", _S, 1),
            ("Node", _S, 1),
            ("Nominated Node", _S, 1),
            ("Readiness Gates", _S, 1),
        ],
        _pod_row,
    ),
    "PodDisruptionBudget": (
        [
            ("Name", _S, 0),
            ("Min Available", _S, 0),
            ("Max Unavailable", _S, 0),
            ("Allowed Disruptions", _I, 0),
            ("Age", _S, 0),
        ],
        _pdb_row,
    ),
    "Deployment": (
        [
            ("Name", _S, 0),
            ("Ready", _S, 0),
            ("Up-to-date", _I, 0),
            ("Available", _I, 0),
            ("Age", _S, 0),
        ],
        _deployment_row,
    ),
    "ReplicaSet": (
        [("Name", _S, 0), ("Desired", _I, 0), ("Current", _I, 0), ("Ready", _I, 0), ("Age", _S, 0)],
        _replicaset_row,
    ),
    "StatefulSet": ([("Name", _S, 0), ("Ready", _S, 0), ("Age", _S, 0)], _statefulset_row),
    "Namespace": ([("Name", _S, 0), ("Status", _S, 0), ("Age", _S, 0)], _namespace_row),
}
DEFAULT = ([("Name", _S, 0), ("Created At", "date", 0)], _default_row)


def table(
    kind: str, objects: list[dict[str, Any]], list_meta: dict[str, Any], now: float
) -> dict[str, Any]:
    columns, row = PRINTERS.get(kind, DEFAULT)
    definitions = [
        {
            "name": name,
            "type": type_,
            "format": "name" if name == "Name" else "",
            "description": "",
            "priority": priority,
        }
        for name, type_, priority in columns
    ]
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": definitions,
        "rows": [
            {
                "cells": row(obj, now),
                "object": {
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": obj["metadata"],
                },
            }
            for obj in objects
        ],
    }
