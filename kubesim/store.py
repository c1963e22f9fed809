"""Object storage for one cluster: resourceVersions, label index, history and watches."""

from __future__ import annotations

import bisect
import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from kubesim.clock import Clock, rfc3339
from kubesim.entries import Change, Entry, Key, Watcher, key_of, new_uid, sort_key
from kubesim.errors import already_exists, not_found
from kubesim.resources import Resource
from kubesim.selectors import FieldSelector, LabelSelector

HISTORY = 50_000

Entries = list[Entry]
Names = list[str]
Keys = list[Key]


class Store:
    """All objects of one cluster. Every method takes the world lock (re-entrant)."""

    def __init__(
        self, lock: threading.RLock, clock: Clock, on_change: Callable[[Change], None]
    ) -> None:
        self.lock = lock
        self.clock = clock
        self.rv = 1000
        self.compacted = 0  # etcd's compaction revision: older lists and watches are gone
        self._on_change = on_change
        self._objects: dict[str, dict[Key, Entry]] = {}
        self._index: dict[str, dict[str, set[Key]]] = {}  # label key -> objects
        self._values: dict[str, dict[tuple[str, str], set[Key]]] = {}  # (key, value) -> objects
        self._order: dict[str, tuple[Names, Keys]] = {}  # sorted keys, per resource
        self._history: deque[Change] = deque(maxlen=HISTORY)
        self._watchers: dict[str, list[Watcher]] = {}

    # ---- reads -------------------------------------------------------------------------
    def get(self, res: Resource, namespace: str, name: str) -> Entry | None:
        with self.lock:
            return self._objects.get(res.name, {}).get((namespace if res.namespaced else "", name))

    def require(self, res: Resource, namespace: str, name: str) -> Entry:
        entry = self.get(res, namespace, name)
        if entry is None:
            raise not_found(res.name, name, res.group)
        return entry

    def list(
        self,
        res: Resource,
        namespace: str | None = None,
        labels: LabelSelector | None = None,
        fields: FieldSelector | None = None,
    ) -> Entries:
        """Matching entries in key order (namespace, name) like etcd."""
        with self.lock:
            objects = self._objects.get(res.name, {})
            keys: Iterable[Key] = self._candidates(res, labels) if labels else objects.keys()
            if namespace:
                keys = [k for k in keys if k[0] == namespace]
            elif fields is not None and (pinned := fields.value_of("metadata.namespace")):
                keys = [k for k in keys if k[0] == pinned]
            if fields is not None and (name := fields.value_of("metadata.name")) is not None:
                keys = [k for k in keys if k[1] == name]
            entries = [(k, objects[k]) for k in keys if k in objects]
        entries.sort(key=lambda item: f"{item[0][0]}/{item[0][1]}")  # etcd key order
        result = []
        for _, entry in entries:
            if (
                labels is not None
                and not labels.empty
                and not labels.matches(entry.meta.get("labels"))
            ):
                continue
            if fields is not None and not fields.empty and not fields.matches(entry.obj):
                continue
            result.append(entry)
        return result

    def page(
        self,
        res: Resource,
        namespace: str | None,
        labels: LabelSelector,
        fields: FieldSelector,
        start: str,
        limit: int | None,
    ) -> tuple[Entries, int]:
        """Entries after sort key ``start`` (``ns/name``), at most ``limit``, and how many
        matching entries remain after them (-1 when unknown: selectors were given)."""
        if not labels.empty or not fields.empty:
            matches = [e for e in self.list(res, namespace, labels, fields) if sort_key(e) > start]
            if limit and len(matches) > limit:
                return matches[:limit], -1
            return matches, 0
        with self.lock:
            order, keys = self._sorted(res)
            low, high = 0, len(order)
            if namespace:
                low = bisect.bisect_left(order, f"{namespace}/")
                high = bisect.bisect_left(order, f"{namespace}0")  # "0" sorts right after "/"
            low = max(low, bisect.bisect_right(order, start, low, high)) if start else low
            end = min(high, low + limit) if limit else high
            objects = self._objects.get(res.name, {})
            return [objects[k] for k in keys[low:end]], high - end

    def _sorted(self, res: Resource) -> tuple[Names, Keys]:
        cached = self._order.get(res.name)
        if cached is None:
            keys = sorted(self._objects.get(res.name, {}), key=lambda k: f"{k[0]}/{k[1]}")
            cached = ([f"{k[0]}/{k[1]}" for k in keys], keys)
            self._order[res.name] = cached
        return cached

    def count(self, res: Resource) -> int:
        with self.lock:
            return len(self._objects.get(res.name, {}))

    def _candidates(self, res: Resource, labels: LabelSelector) -> Iterable[Key]:
        index = self._index.get(res.name, {})
        values = self._values.get(res.name, {})
        best: set[Key] | None = None
        for req in labels.requirements:
            if not req.indexable:
                continue
            if req.op == "exists":
                found = index.get(req.key, set())
            else:
                found = set()
                for value in req.values:
                    found |= values.get((req.key, value), set())
            if best is None or len(found) < len(best):
                best = found
        if best is None:
            return list(self._objects.get(res.name, {}).keys())
        return list(best)

    # ---- writes ------------------------------------------------------------------------
    def _next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def create(self, res: Resource, obj: dict[str, Any]) -> Entry:
        """Store a new object, filling uid, resourceVersion, creationTimestamp, generation."""
        with self.lock:
            key = key_of(obj)
            bucket = self._objects.setdefault(res.name, {})
            if key in bucket:
                raise already_exists(res.name, key[1], res.group)
            self._order.pop(res.name, None)
            meta = obj["metadata"]
            if "uid" not in meta:
                meta["uid"] = new_uid()
            meta.setdefault("creationTimestamp", rfc3339(self.clock.time()))
            meta.setdefault("generation", 1)
            return self._write(res, key, None, obj, "ADDED")

    def put(self, res: Resource, obj: dict[str, Any]) -> Entry:
        """Replace an existing object with ``obj`` (a new dict), giving it a new resourceVersion."""
        with self.lock:
            key = key_of(obj)
            old = self._objects.get(res.name, {}).get(key)
            if old is None:
                raise not_found(res.name, key[1], res.group)
            return self._write(res, key, old, obj, "MODIFIED")

    def mutate(
        self, res: Resource, namespace: str, name: str, change: Callable[[dict[str, Any]], Any]
    ) -> Entry | None:
        """Apply ``change`` to a copy of the object and store it; None when absent.

        If ``change`` returns False the object is left as it was.
        """
        with self.lock:
            entry = self.get(res, namespace, name)
            if entry is None:
                return None
            obj = entry.copy()
            if change(obj) is False:
                return entry
            return self.put(res, obj)

    def remove(
        self,
        res: Resource,
        namespace: str,
        name: str,
        last: Callable[[dict[str, Any]], None] | None = None,
    ) -> Entry:
        """Delete the object; ``last`` may stamp the final copy (what DELETED events carry)."""
        with self.lock:
            key = (namespace if res.namespaced else "", name)
            old = self._objects.get(res.name, {}).get(key)
            if old is None:
                raise not_found(res.name, name, res.group)
            obj = old.copy()
            if last is not None:
                last(obj)
            rv = self._next_rv()
            obj["metadata"]["resourceVersion"] = str(rv)
            del self._objects[res.name][key]
            self._order.pop(res.name, None)
            self._unindex(res.name, key, old)
            gone = Entry(obj)
            self._publish(Change(res.name, "DELETED", old, gone, rv))
            return gone

    def _write(
        self, res: Resource, key: Key, old: Entry | None, obj: dict[str, Any], kind: str
    ) -> Entry:
        rv = self._next_rv()
        obj["metadata"]["resourceVersion"] = str(rv)
        entry = Entry(obj)
        self._objects.setdefault(res.name, {})[key] = entry
        if old is not None:
            self._unindex(res.name, key, old)
        index = self._index.setdefault(res.name, {})
        values = self._values.setdefault(res.name, {})
        for label, value in (obj["metadata"].get("labels") or {}).items():
            index.setdefault(label, set()).add(key)
            values.setdefault((label, value), set()).add(key)
        self._publish(Change(res.name, kind, old, entry, rv))
        return entry

    def _unindex(self, resource: str, key: Key, entry: Entry) -> None:
        index = self._index.get(resource, {})
        values = self._values.get(resource, {})
        for label, value in (entry.meta.get("labels") or {}).items():
            index.get(label, set()).discard(key)
            values.get((label, value), set()).discard(key)

    def _publish(self, change: Change) -> None:
        self._history.append(change)
        for watcher in self._watchers.get(change.resource, ()):
            watcher.offer(change)
        self._on_change(change)

    def compact(self) -> None:
        """etcd compacts to the current revision (the API server's compactor runs every 5
        minutes): continue tokens and watch resourceVersions from before now are too old."""
        with self.lock:
            self.rv += 1  # etcd's revision moves with every key (leases...): past every list
            self._history.clear()
            self.compacted = self.rv

    # ---- watches -----------------------------------------------------------------------
    def watch(self, watcher: Watcher, since: int | None) -> int | None:
        """Register ``watcher``; queue the events after ``since`` (None: current state as ADDED).

        Returns None, or the oldest resourceVersion still known when ``since`` is too old.
        """
        with self.lock:
            res = watcher.resource
            if since is None:
                for entry in self.list(res, watcher.namespace, watcher.labels, watcher.fields):
                    watcher.queue.put(("ADDED", entry))
            elif since < self.rv:
                oldest = self._history[0].rv if self._history else self.rv + 1
                if since < oldest - 1:
                    return oldest
                for change in self._history:
                    if change.rv > since and change.resource == res.name:
                        watcher.offer(change)
            self._watchers.setdefault(res.name, []).append(watcher)
            return None

    def unwatch(self, watcher: Watcher) -> None:
        with self.lock:
            watchers = self._watchers.get(watcher.resource.name, [])
            if watcher in watchers:
                watchers.remove(watcher)

    def close_watches(self) -> None:
        with self.lock:
            for watchers in self._watchers.values():
                for watcher in watchers:
                    watcher.close()
            self._watchers.clear()
