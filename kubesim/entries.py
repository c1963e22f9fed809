"""What the store holds and publishes: stored objects (``Entry``, with their serialised
form), the changes made to them (``Change``), and the watchers that receive those changes."""

from __future__ import annotations

import json
import os
import queue
from dataclasses import dataclass
from typing import Any

from kubesim.resources import Resource
from kubesim.selectors import FieldSelector, LabelSelector

Key = tuple[str, str]  # (namespace or "", name)


def new_uid() -> str:
    """A random (version 4) UUID string."""
    h = bytearray(os.urandom(16))
    h[6] = (h[6] & 0x0F) | 0x40
    h[8] = (h[8] & 0x3F) | 0x80
    x = h.hex()
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


class Entry:
    """One stored version of an object. Never mutated: writes store a new Entry."""

    __slots__ = ("_raw", "obj")

    def __init__(self, obj: dict[str, Any]) -> None:
        self.obj = obj
        self._raw: bytes | None = None

    def raw(self) -> bytes:
        raw = self._raw
        if raw is None:
            raw = self._raw = json.dumps(self.obj, separators=(",", ":")).encode()
        return raw

    def copy(self) -> dict[str, Any]:
        """A deep copy, safe to change."""
        result: dict[str, Any] = json.loads(self.raw())
        return result

    @property
    def meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = self.obj["metadata"]
        return meta

    @property
    def rv(self) -> int:
        return int(self.meta["resourceVersion"])


@dataclass(frozen=True)
class Change:
    resource: str
    type: str  # ADDED, MODIFIED, DELETED
    old: Entry | None
    new: Entry
    rv: int


def sort_key(entry: Entry) -> str:
    """The order etcd keeps objects in: namespace/name ("/name" when cluster-scoped)."""
    return f"{entry.meta.get('namespace', '')}/{entry.meta['name']}"


def key_of(obj: dict[str, Any]) -> Key:
    meta = obj["metadata"]
    return (meta.get("namespace") or "", meta["name"])


class Watcher:
    """A live watch: receives matching changes as (type, Entry); None ends it."""

    def __init__(
        self,
        resource: Resource,
        namespace: str | None,
        labels: LabelSelector,
        fields: FieldSelector,
    ) -> None:
        self.resource = resource
        self.namespace = namespace
        self.labels = labels
        self.fields = fields
        self.queue: queue.Queue[tuple[str, Entry] | None] = queue.Queue()
        self.bookmarks = False  # the client asked for BOOKMARK events (allowWatchBookmarks)

    def bookmark(self, resource_version: int) -> bytes:
        """A BOOKMARK event: an object of the watched kind carrying only the resourceVersion
        the watch has reached (the real one also carries the kind's empty spec and status)."""
        obj = {
            "kind": self.resource.kind,
            "apiVersion": self.resource.api_version,
            "metadata": {"resourceVersion": str(resource_version)},
        }
        return json.dumps({"type": "BOOKMARK", "object": obj}, separators=(",", ":")).encode()

    def matches(self, entry: Entry | None) -> bool:
        if entry is None:
            return False
        meta = entry.meta
        if self.namespace and meta.get("namespace") != self.namespace:
            return False
        return self.labels.matches(meta.get("labels")) and self.fields.matches(entry.obj)

    def offer(self, change: Change) -> None:
        if change.type == "DELETED":
            if self.matches(change.new):
                self.queue.put(("DELETED", change.new))
            return
        was, now = self.matches(change.old), self.matches(change.new)
        if now:
            self.queue.put(("MODIFIED" if was else "ADDED", change.new))
        elif was:  # moved out of the selection: the real server sends DELETED
            self.queue.put(("DELETED", change.new))

    def close(self) -> None:
        self.queue.put(None)
