"""Merging an extra Ignition fragment over a config, as Ignition merges a child config. Pure.

`merge(base, extra)` returns the merged config and what the fragment changed ("file /x",
"unit y.service"); the byo.yaml's extra Ignition goes through it last, so it wins.
"""

from __future__ import annotations

import copy
from typing import Any

_KEYED = {
    ("storage", "files"): "path",
    ("storage", "directories"): "path",
    ("storage", "links"): "path",
    ("storage", "disks"): "device",
    ("storage", "raid"): "name",
    ("storage", "filesystems"): "device",
    ("storage", "luks"): "name",
    ("systemd", "units"): "name",
    ("passwd", "users"): "name",
    ("passwd", "groups"): "name",
}
_PATH_KINDS = (("storage", "files"), ("storage", "directories"), ("storage", "links"))


def merge(base: dict[str, Any], extra: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """`extra` over `base`, as Ignition merges a child config: entries keyed by path (files,
    directories, links) or name (units, users...) are merged field by field with the child's
    fields winning; a unit's drop-ins merge by name; list values of users are unioned. A path
    the child declares as another kind (a link where a file was) replaces the parent's entry.
    Returns the merged config and what the child changed ("file /x", "unit y.service")."""
    merged = copy.deepcopy(base)
    changed: list[str] = []
    for key, value in extra.items():
        if key == "ignition":
            section = merged.setdefault("ignition", {})
            for sub, sub_value in (value or {}).items():
                if sub == "version":
                    continue
                if isinstance(sub_value, dict) and isinstance(section.get(sub), dict):
                    section[sub] = {**section[sub], **copy.deepcopy(sub_value)}
                else:
                    section[sub] = copy.deepcopy(sub_value)
        elif key == "kernelArguments":
            section = merged.setdefault(key, {})
            for sub, items in (value or {}).items():
                section[sub] = _union(section.get(sub) or [], items or [])
        elif key in ("storage", "systemd", "passwd"):
            section = merged.setdefault(key, {})
            for sub, items in (value or {}).items():
                id_key = _KEYED.get((key, sub))
                if id_key is None:
                    section[sub] = copy.deepcopy(items)
                    continue
                for item in items or []:
                    label = _merge_item(merged, (key, sub), id_key, item)
                    if label and label not in changed:
                        changed.append(label)
        else:
            merged[key] = copy.deepcopy(value)
    return merged, changed


def _merge_item(
    merged: dict[str, Any], where: tuple[str, str], id_key: str, item: dict[str, Any]
) -> str:
    section, sub = where
    entries: list[dict[str, Any]] = merged[section].setdefault(sub, [])
    ident = item.get(id_key)
    label = ""
    if where in _PATH_KINDS:
        for other in _PATH_KINDS:
            if other == where:
                continue
            others = merged.get(other[0], {}).get(other[1]) or []
            kept = [e for e in others if e.get("path") != ident]
            if len(kept) != len(others):
                merged[other[0]][other[1]] = kept
                label = f"{other[1][:-1]} {ident}"
    existing = next((e for e in entries if e.get(id_key) == ident), None)
    if existing is None:
        entries.append(copy.deepcopy(item))
        return label
    for field_name, value in item.items():
        if field_name == "dropins":
            existing["dropins"] = _merge_dropins(existing.get("dropins") or [], value or [])
        elif field_name in ("sshAuthorizedKeys", "groups") and section == "passwd":
            existing[field_name] = _union(existing.get(field_name) or [], value or [])
        elif field_name == "append":
            existing["append"] = (existing.get("append") or []) + copy.deepcopy(value or [])
        else:
            existing[field_name] = copy.deepcopy(value)
    kind = {"files": "file", "directories": "directory", "links": "link", "units": "unit"}
    return f"{kind.get(sub, sub[:-1])} {ident}"


def _merge_dropins(base: list[dict[str, Any]], extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = [dict(d) for d in base]
    for dropin in extra:
        found = next((d for d in out if d.get("name") == dropin.get("name")), None)
        if found is None:
            out.append(dict(dropin))
        else:
            found.update(dropin)
    return out


def _union(base: list[Any], extra: list[Any]) -> list[Any]:
    out = list(base)
    out += [x for x in extra if x not in out]
    return out
