"""What every workload controller shares: a de-duplicated work queue on the world's timer,
controller references, and creating pods from a template through the API's create path."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kubesim.entries import Entry
from kubesim.errors import ApiError
from kubesim.resources import PODS, Resource
from kubesim.routes import Route

if TYPE_CHECKING:
    from kubesim.entries import Change
    from kubesim.protocols import SimCluster, SimWorld


class WorkQueue:
    """Runs ``sync(cluster, namespace, name)`` once per key after a change, as a controller's
    rate-limited queue does: several changes before the sync collapse into one."""

    def __init__(self, world: SimWorld, sync: Callable[[SimCluster, str, str], None]) -> None:
        self.world = world
        self._sync = sync
        self._pending: set[tuple[str, str, str]] = set()

    def add(self, cluster: SimCluster, namespace: str, name: str, delay: float = 0.0) -> None:
        key = (cluster.name, namespace, name)
        if key in self._pending:
            return
        self._pending.add(key)

        def run() -> None:
            self._pending.discard(key)
            if not cluster.destroyed:
                self._sync(cluster, namespace, name)

        self.world.schedule(delay, run)


class OwnerController:
    """A workload controller's wiring: a change to one of its objects, or to an object it
    controls (by controllerRef of kind ``KIND``), queues a sync of that owner."""

    KIND = ""

    def __init__(self, world: SimWorld) -> None:
        self.queue = WorkQueue(world, self.sync)

    def on_owner(self, cluster: SimCluster, change: Change) -> None:
        if change.type != "DELETED":
            self.queue.add(cluster, change.new.meta["namespace"], change.new.meta["name"])

    def on_owned(self, cluster: SimCluster, change: Change) -> None:
        ref = controller_ref(change.new.obj)
        if ref is not None and ref.get("kind") == self.KIND:
            self.queue.add(cluster, change.new.meta["namespace"], ref.get("name", ""))

    def sync(self, cluster: SimCluster, namespace: str, name: str) -> None:
        raise NotImplementedError


def controller_ref(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The ownerReference with ``controller: true``, if any."""
    for ref in obj.get("metadata", {}).get("ownerReferences") or []:
        if ref.get("controller"):
            found: dict[str, Any] = ref
            return found
    return None


def owner_reference(entry: Entry) -> dict[str, Any]:
    """An ownerReference naming ``entry`` as the controller, as the controllers write it."""
    return {
        "apiVersion": entry.obj.get("apiVersion", ""),
        "kind": entry.obj.get("kind", ""),
        "name": entry.meta["name"],
        "uid": entry.meta.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def owned_by(cluster: SimCluster, res: Resource, owner: Entry) -> list[Entry]:
    """Objects of ``res`` in the owner's namespace whose controller is ``owner`` (by uid)."""
    uid = owner.meta.get("uid")
    return [
        e
        for e in cluster.store.list(res, owner.meta.get("namespace") or None)
        if (ref := controller_ref(e.obj)) is not None and ref.get("uid") == uid
    ]


def active(pod: dict[str, Any]) -> bool:
    """Counts as one of a controller's pods: not terminating and not finished."""
    phase = pod.get("status", {}).get("phase")
    return not pod["metadata"].get("deletionTimestamp") and phase not in ("Succeeded", "Failed")


def create_from_template(
    cluster: SimCluster,
    owner: Entry,
    template: dict[str, Any],
    name: str = "",
    generate_name: str = "",
    extra_labels: dict[str, str] | None = None,
    spec_changes: Callable[[dict[str, Any]], None] | None = None,
) -> Entry | None:
    """A pod from ``template`` controlled by ``owner``, created like a client's create (defaults,
    validation, namespace checks). None when the API refuses it (e.g. namespace terminating)."""
    meta_template = template.get("metadata") or {}
    namespace = owner.meta["namespace"]
    meta: dict[str, Any] = {
        "namespace": namespace,
        "labels": {**(meta_template.get("labels") or {}), **(extra_labels or {})},
        "ownerReferences": [owner_reference(owner)],
    }
    if meta_template.get("annotations"):
        meta["annotations"] = dict(meta_template["annotations"])
    if name:
        meta["name"] = name
    else:
        meta["generateName"] = generate_name
    pod = {"metadata": meta, "spec": copy.deepcopy(template.get("spec") or {})}
    if spec_changes is not None:
        spec_changes(pod["spec"])
    try:
        return cluster.api.create_object(PODS, Route(PODS, namespace), pod)
    except ApiError:
        return None


def write_status(cluster: SimCluster, res: Resource, entry: Entry, status: dict[str, Any]) -> None:
    """Store ``status`` (merged over the current one) when it changes anything."""
    merged = {**(entry.obj.get("status") or {}), **status}
    if merged == entry.obj.get("status"):
        return
    obj = entry.copy()
    obj["status"] = merged
    cluster.store.put(res, obj)
