"""API discovery as kubectl reads it: ``/apis`` groups and each group-version's resource list
(``/api/v1``, ``/apis/apps/v1`` ...), with verbs, short names and subresources."""

from __future__ import annotations

from typing import Any

from kubesim.resources import RESOURCES, SUBRESOURCES, Resource

_SHORT_NAMES = {
    "nodes": ["no"],
    "namespaces": ["ns"],
    "pods": ["po"],
    "configmaps": ["cm"],
    "serviceaccounts": ["sa"],
    "events": ["ev"],
    "poddisruptionbudgets": ["pdb"],
    "daemonsets": ["ds"],
    "replicasets": ["rs"],
    "deployments": ["deploy"],
    "statefulsets": ["sts"],
    "persistentvolumes": ["pv"],
    "persistentvolumeclaims": ["pvc"],
    "certificatesigningrequests": ["csr"],
}
_ALL_CATEGORY = {"pods", "deployments", "replicasets", "statefulsets", "daemonsets", "jobs"}
_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
_SUB_KINDS = {"eviction": ("Eviction", "policy", "v1", ["create"])}


def group_versions() -> list[tuple[str, str]]:
    """(group, version) pairs served, core first, then groups by name."""
    found = sorted({(r.group, r.version) for r in RESOURCES.values() if r.group})
    return found


def group_list() -> dict[str, Any]:
    groups = []
    for group, version in group_versions():
        gv = {"groupVersion": f"{group}/{version}", "version": version}
        groups.append({"name": group, "versions": [gv], "preferredVersion": gv})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def _entry(res: Resource) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": res.name,
        "singularName": res.kind.lower(),
        "namespaced": res.namespaced,
        "kind": res.kind,
        "verbs": list(_VERBS),
    }
    if res.name in _SHORT_NAMES:
        entry["shortNames"] = list(_SHORT_NAMES[res.name])
    if res.name in _ALL_CATEGORY:
        entry["categories"] = ["all"]
    return entry


def _subresource_entry(res: Resource, sub: str) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": f"{res.name}/{sub}",
        "singularName": "",
        "namespaced": res.namespaced,
        "kind": res.kind,
        "verbs": ["get", "patch", "update"],
    }
    if sub in _SUB_KINDS:
        kind, group, version, verbs = _SUB_KINDS[sub]
        entry.update(kind=kind, group=group, version=version, verbs=list(verbs))
    return entry


def resource_list(path: str) -> dict[str, Any] | None:
    """The APIResourceList for ``/api/v1`` or ``/apis/GROUP/VERSION``; None when not served."""
    parts = path.strip("/").split("/")
    if parts == ["api", "v1"]:
        group, version = "", "v1"
    elif len(parts) == 3 and parts[0] == "apis":
        group, version = parts[1], parts[2]
    else:
        return None
    served = [r for r in RESOURCES.values() if r.group == group and r.version == version]
    if not served:
        return None
    resources = []
    for res in sorted(served, key=lambda r: r.name):
        resources.append(_entry(res))
        for owner, sub in sorted(SUBRESOURCES):
            if owner == res.name:
                resources.append(_subresource_entry(res, sub))
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": resources,
    }
