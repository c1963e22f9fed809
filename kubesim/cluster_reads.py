"""Reading a cluster's state from a test: copies of stored objects, safe to keep."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from kubesim import objects
from kubesim.clock import rfc3339
from kubesim.entries import Entry
from kubesim.hosts import Host
from kubesim.resources import CONFIGMAPS, NAMESPACES, NODES, PDBS, PODS, SECRETS, Resource
from kubesim.selectors import parse_label_selector
from kubesim.store import Store

if TYPE_CHECKING:
    from kubesim.protocols import SimCluster, SimWorld


T = TypeVar("T")


class ClusterReads:
    world: SimWorld
    name: str
    version: str
    lock: threading.RLock
    store: Store
    hosts: dict[str, Host]

    @property
    def whole(self) -> SimCluster:
        """The composed cluster these parts belong to, as the behaviours they call know it."""
        return cast("SimCluster", self)

    def now(self) -> str:
        return rfc3339(self.world.clock.time())

    def _read(self, res: Resource, namespace: str, name: str) -> dict[str, Any] | None:
        entry = self.store.get(res, namespace, name)
        return entry.copy() if entry else None

    def node(self, name: str) -> dict[str, Any] | None:
        return self._read(NODES, "", name)

    def nodes(self, label_selector: str | None = None) -> list[dict[str, Any]]:
        sel = parse_label_selector(label_selector)
        return [e.copy() for e in self.store.list(NODES, labels=sel)]

    def node_names(self) -> list[str]:
        return [e.meta["name"] for e in self.store.list(NODES)]

    def pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self._read(PODS, namespace, name)

    def pods(self, namespace: str | None = None, node: str | None = None) -> list[dict[str, Any]]:
        entries = self.store.list(PODS, namespace)
        return [
            e.copy()
            for e in entries
            if node is None or e.obj.get("spec", {}).get("nodeName") == node
        ]

    def pdb(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self._read(PDBS, namespace, name)

    def secret(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self._read(SECRETS, namespace, name)

    def secret_values(self, namespace: str, name: str) -> dict[str, str] | None:
        obj = self.secret(namespace, name)
        return None if obj is None else objects.secret_values(obj)

    def configmap(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self._read(CONFIGMAPS, namespace, name)

    def namespace(self, name: str) -> dict[str, Any] | None:
        return self._read(NAMESPACES, "", name)

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        """Any stored object by plural resource name (``daemonsets``, ``leases``...)."""
        from kubesim.resources import RESOURCES

        for res in RESOURCES.values():
            if res.name == resource:
                return self._read(res, namespace, name)
        raise KeyError(resource)

    def wait_for(self, predicate: Callable[[], T], timeout: float = 60.0) -> T:
        """Block until ``predicate()`` is truthy (re-checked on every state change)."""
        return self.world.wait_for(predicate, timeout)

    def entries(self, res: Resource, namespace: str | None = None) -> Iterable[Entry]:
        return self.store.list(res, namespace)

    def add_namespace(self, name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
        return self.store.create(NAMESPACES, objects.namespace_object(name, labels)).copy()

    def _ensure_namespace(self, name: str) -> None:
        if self.store.get(NAMESPACES, "", name) is None:
            self.add_namespace(name)
