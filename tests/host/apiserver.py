"""The kube-apiserver behind tests/host's fake curl: the source's record ConfigMap, Nodes.

What it does as a real one does, for the unit's requests:
- authentication: a bootstrap token (`Authorization: Bearer <id>.<secret>`) is the user
  `system:bootstrap:<id>`, a kubelet client certificate the user `system:node:<name>`; anything
  else answers 401. Authorization: the token may get and patch its record ConfigMap alone (the
  Role joinops binds to its group), a node may get its own Node alone (the Node authorizer);
  anything else answers 403.
- responses are Status objects on errors, and pretty-printed JSON (two-space indent, `"key":
  "value"`, map keys sorted as Go's encoding/json sorts them) when the User-Agent starts with
  "curl" (k8s.io/apiserver's responsewriters, isPrettyPrint), as it is for curl; compact otherwise.
- a merge patch (RFC 7386) needs `Content-Type: application/merge-patch+json` (415 otherwise),
  valid JSON (400: a control character inside a string is invalid JSON), string values in a
  ConfigMap's data (400); a `metadata.resourceVersion` that is not the current one answers 409
  Conflict; an empty one ("") is no precondition (a ConfigMap allows unconditional updates).
- APF's 429 when the test says the API server is throttling.

Other clients' writes are the test's instructions: `meanwhile` (a write that lands just before a
matching request of the unit), and `joinops` (what the worker writes once the unit's record
shows a phase: `way-clear` after deleting the old Node, workers/fallback.py).
"""

from __future__ import annotations

import json
import re
from typing import Any

CONFIGMAP = re.compile(r"/api/v1/namespaces/([^/]+)/configmaps/([^/?]+)")
NODE = re.compile(r"/api/v1/nodes/([^/?]+)")
TIME = "2025-01-01T00:00:00Z"


def answer(state: dict[str, Any], endpoint: str, request: dict[str, Any]) -> tuple[int, str]:
    """The HTTP status and body for the unit's request to the cluster at `endpoint`."""
    cluster = state["clusters"][endpoint]
    status, obj = _handle(state, cluster, request)
    body = _parse(request["data"]) if request["data"] is not None else None
    state["requests"].append(
        {
            "cluster": cluster["name"],
            "method": request["method"],
            "path": request["path"],
            "status": status,
            "body": body,
        }
    )
    if request["headers"]["user-agent"].startswith("curl"):
        return status, json.dumps(obj, indent=2, ensure_ascii=False)
    return status, json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n"


def node(state: dict[str, Any], name: str, is_ready: bool) -> dict[str, Any]:
    """A Node as its kubelet registers it; its conditions' fields in the API's order."""
    conditions = [
        _condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "no memory pressure"),
        _condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "no disk pressure"),
        _condition("PIDPressure", "False", "KubeletHasSufficientPID", "sufficient PID"),
        _condition("Ready", "True", "KubeletReady", "kubelet is posting ready status")
        if is_ready
        else _condition(
            "Ready",
            "False",
            "KubeletNotReady",
            "container runtime network not ready: NetworkReady=false "
            "reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not "
            "initialized",
        ),
    ]
    return {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "uid": "0b9c4f6e-node",
            "resourceVersion": _next_version(state),
            "creationTimestamp": TIME,
            "labels": {"kubernetes.io/hostname": name},
        },
        "spec": {},
        "status": {"conditions": conditions},
    }


def ready(found: dict[str, Any] | None) -> bool:
    conditions = (found or {}).get("status", {}).get("conditions", [])
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def _condition(kind: str, status: str, reason: str, message: str) -> dict[str, str]:
    return {
        "type": kind,
        "status": status,
        "lastHeartbeatTime": TIME,
        "lastTransitionTime": TIME,
        "reason": reason,
        "message": message,
    }


def _handle(
    state: dict[str, Any], cluster: dict[str, Any], request: dict[str, Any]
) -> tuple[int, dict[str, Any]]:
    user = _user(cluster, request)
    if user is None:
        return _status(401, "Unauthorized", "Unauthorized")
    if state["throttle"] and state["throttle"][0]["method"] == request["method"]:
        state["throttle"].pop(0)
        return _status(429, "TooManyRequests", "Too many requests, please try again later.")
    configmap = CONFIGMAP.fullmatch(request["path"])
    if configmap is not None:
        return _configmap(state, cluster, user, request, *configmap.groups())
    node_path = NODE.fullmatch(request["path"])
    if node_path is not None:
        return _node(cluster, user, request["method"], node_path.group(1))
    return _status(404, "NotFound", "the server could not find the requested resource")


def _user(cluster: dict[str, Any], request: dict[str, Any]) -> str | None:
    bearer = request["headers"].get("authorization", "")
    if bearer.startswith("Bearer "):
        return cluster["tokens"].get(bearer.removeprefix("Bearer "))
    if request["cert"]:
        with open(request["cert"]) as f:
            found = re.match(r"CERTIFICATE (system:node:\S+)", f.read())
        return found.group(1) if found else None
    return None


def _configmap(
    state: dict[str, Any],
    cluster: dict[str, Any],
    user: str,
    request: dict[str, Any],
    namespace: str,
    name: str,
) -> tuple[int, dict[str, Any]]:
    key, verb = f"{namespace}/{name}", request["method"].lower()
    if verb not in ("get", "patch"):
        return _status(405, "MethodNotAllowed", f"the server does not allow this method: {verb}")
    if key not in cluster["grants"].get(user, []):
        return _forbidden(user, verb, "configmaps", name, namespace)
    if verb == "patch":
        _others_write(state, cluster, key, request["data"] or "")
    found = cluster["configmaps"].get(key)
    if found is None:
        return _status(404, "NotFound", f'configmaps "{name}" not found')
    if verb == "get":
        _joinops_reacts(state, cluster, found)
        return 200, _sorted(found)
    return _merge_patch(state, found, request)


def _merge_patch(
    state: dict[str, Any], found: dict[str, Any], request: dict[str, Any]
) -> tuple[int, dict[str, Any]]:
    if request["headers"].get("content-type") != "application/merge-patch+json":
        return _status(
            415, "UnsupportedMediaType", "the body of the request was in an unknown format"
        )
    try:
        patch = json.loads(request["data"] or "")
    except json.JSONDecodeError as e:
        return _status(400, "BadRequest", f"error decoding patch: {e}")
    name = found["metadata"]["name"]
    wanted = (patch.get("metadata") or {}).get("resourceVersion")
    if wanted and wanted != found["metadata"]["resourceVersion"]:
        return _status(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on configmaps "{name}": the object has been '
            "modified; please apply your changes to the latest version and try again",
        )
    merged = _merge(found, patch)
    if not all(isinstance(v, str) for v in (merged.get("data") or {}).values()):
        return _status(400, "BadRequest", "ConfigMap in version v1 cannot be handled: data")
    merged["metadata"]["resourceVersion"] = _next_version(state)
    found.clear()
    found.update(merged)
    return 200, _sorted(found)


def _others_write(state: dict[str, Any], cluster: dict[str, Any], key: str, data: str) -> None:
    """A write another client makes just before this patch of the unit lands, once."""
    for write in list(state["meanwhile"]):
        if write["contains"] in data:
            state["meanwhile"].remove(write)
            found = cluster["configmaps"][key]
            found.update(_merge(found, write["patch"]))
            found["metadata"]["resourceVersion"] = _next_version(state)


def _joinops_reacts(state: dict[str, Any], cluster: dict[str, Any], found: dict[str, Any]) -> None:
    """The worker, seeing the unit's phase in the record (it polls): after `reads` reads of the
    unit in that phase, its write lands (and its Node deletion, to make way)."""
    phase = (found.get("data") or {}).get("phase")
    for reaction in list(state["joinops"]):
        if reaction["phase"] != phase:
            continue
        reaction["reads"] -= 1
        if reaction["reads"] > 0:
            continue
        state["joinops"].remove(reaction)
        cluster["nodes"].pop(reaction.get("delete_node", ""), None)
        found["data"].update(reaction["data"])
        found["metadata"]["resourceVersion"] = _next_version(state)


def _node(cluster: dict[str, Any], user: str, method: str, name: str) -> tuple[int, dict[str, Any]]:
    if method != "GET" or user != f"system:node:{name}":
        return _forbidden(user, method.lower(), "nodes", name, "")
    found = cluster["nodes"].get(name)
    if found is None:
        return _status(404, "NotFound", f'nodes "{name}" not found')
    return 200, found


def _merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return patch
    merged = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = _merge(merged.get(key), value)
    return merged


def _sorted(obj: dict[str, Any]) -> dict[str, Any]:
    """Go's encoding/json writes a map's keys sorted (a ConfigMap's data is a map)."""
    return {**obj, "data": dict(sorted((obj.get("data") or {}).items()))}


def _next_version(state: dict[str, Any]) -> str:
    state["rv"] += 1
    return str(state["rv"])


def _forbidden(
    user: str, verb: str, resource: str, name: str, namespace: str
) -> tuple[int, dict[str, Any]]:
    where = f' in the namespace "{namespace}"' if namespace else " at the cluster scope"
    return _status(
        403,
        "Forbidden",
        f'{resource} "{name}" is forbidden: User "{user}" cannot {verb} resource "{resource}" '
        f'in API group ""{where}',
    )


def _status(code: int, reason: str, message: str) -> tuple[int, dict[str, Any]]:
    return code, {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


def _parse(data: str) -> Any:
    try:
        return json.loads(data)
    except json.JSONDecodeError:
        return data
