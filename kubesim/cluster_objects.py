"""Objects a test puts in a cluster (pods, budgets, secrets, config maps), and pod and
namespace deletion as the API server does it."""

from __future__ import annotations

import secrets
from typing import Any

from kubesim import objects, pod_objects, workload_objects
from kubesim.clock import rfc3339
from kubesim.cluster_reads import ClusterReads
from kubesim.entries import Entry
from kubesim.resources import (
    CONFIGMAPS,
    DAEMONSETS,
    NAMESPACES,
    NODES,
    PDBS,
    PODS,
    REPLICASETS,
    SECRETS,
    Resource,
)


class ClusterObjects(ClusterReads):
    _pod_ips: int

    def next_pod_ip(self) -> str:
        self._pod_ips += 1
        n = self._pod_ips
        return f"10.244.{(n // 250) % 256}.{n % 250 + 2}"

    def add_pod(
        self,
        node: str | None,
        name: str,
        namespace: str = "default",
        labels: dict[str, str] | None = None,
        owner_kind: str | None = None,
        mirror: bool = False,
        empty_dir: bool = False,
        phase: str = "Running",
        owner_name: str | None = None,
        annotations: dict[str, str] | None = None,
        spec: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A pod bound to ``node``. ``phase="Running"`` makes it Running and Ready at once;
        ``"Pending"`` leaves it to the node's kubelet (it starts shortly if the kubelet runs).
        ``spec`` entries override the generated pod spec."""
        with self.lock:
            self._ensure_namespace(namespace)
            owner = self._owner(namespace, owner_kind, owner_name or f"{name}-owner", labels or {})
            notes = dict(annotations or {})
            if mirror:
                notes[pod_objects.MIRROR_ANNOTATION] = secrets.token_hex(16)
                owner = {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "name": node or "",
                    "uid": self._node_uid(node),
                    "controller": True,
                }
            obj = pod_objects.pod_object(namespace, name, node, labels, notes, owner, empty_dir)
            if spec:
                obj["spec"].update(spec)
                pod_objects.default_pod(obj)
            now = self.now()
            if node:
                pod_objects.set_pod_scheduled(obj, now)
            if node and phase == "Running":
                pod_objects.set_pod_running(obj, self.hosts.get(node), self.next_pod_ip(), now)
            elif phase in ("Succeeded", "Failed"):
                pod_objects.set_pod_finished(
                    obj, self.hosts.get(node or ""), now, phase == "Succeeded"
                )
            return self.store.create(PODS, obj).copy()

    def _node_uid(self, node: str | None) -> str:
        entry = self.store.get(NODES, "", node or "")
        return entry.meta["uid"] if entry else ""

    def _owner(
        self, namespace: str, kind: str | None, name: str, labels: dict[str, str]
    ) -> dict[str, Any] | None:
        if kind is None:
            return None
        res: Resource | None = {"DaemonSet": DAEMONSETS, "ReplicaSet": REPLICASETS}.get(kind)
        uid = ""
        api_version = "apps/v1"
        if res is not None:
            entry = self.store.get(res, namespace, name)
            if entry is None:
                owner_labels = labels or {"app": name}
                if res is DAEMONSETS:
                    obj = workload_objects.daemonset_object(namespace, name, owner_labels)
                else:
                    obj = workload_objects.default_replicaset(
                        {
                            "apiVersion": "apps/v1",
                            "kind": "ReplicaSet",
                            "metadata": objects.meta(name, namespace, labels=dict(owner_labels)),
                            "spec": {"selector": {"matchLabels": dict(owner_labels)}},
                        }
                    )
                entry = self.store.create(res, obj)
            elif res is REPLICASETS:  # one more pod of this ReplicaSet: one more replica
                grown = entry.copy()
                grown["spec"]["replicas"] = int(grown["spec"].get("replicas", 1)) + 1
                entry = self.store.put(res, grown)
            uid = entry.meta["uid"]
        else:
            api_version = {"Job": "batch/v1", "StatefulSet": "apps/v1"}.get(kind, "v1")
            uid = secrets.token_hex(16)
        return {
            "apiVersion": api_version,
            "kind": kind,
            "name": name,
            "uid": uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }

    def delete_pod(self, namespace: str, name: str, grace: int | None = None) -> Entry:
        """Graceful deletion as the API server does it.

        A pod bound to a node gets deletionTimestamp + deletionGracePeriodSeconds and stays
        Terminating until that node's kubelet finishes it; an unbound or finished pod, or
        ``grace == 0``, goes at once.
        """
        with self.lock:
            entry = self.store.require(PODS, namespace, name)
            pod = entry.obj
            bound = bool(pod.get("spec", {}).get("nodeName"))
            finished = pod.get("status", {}).get("phase") in ("Succeeded", "Failed")
            if grace is None:
                grace = int(pod.get("spec", {}).get("terminationGracePeriodSeconds", 30))
            meta = pod["metadata"]
            if not bound or finished or grace <= 0:
                return self._remove_pod(namespace, name, bool(meta.get("deletionTimestamp")))
            if meta.get("deletionTimestamp") and grace >= int(
                meta.get("deletionGracePeriodSeconds", 0)
            ):
                return entry
            deadline = rfc3339(self.world.clock.time() + grace)

            def terminate(obj: dict[str, Any]) -> None:
                obj["metadata"]["deletionTimestamp"] = deadline
                obj["metadata"]["deletionGracePeriodSeconds"] = grace

            result = self.store.mutate(PODS, namespace, name, terminate)
            assert result is not None
            return result

    def _remove_pod(self, namespace: str, name: str, terminating: bool) -> Entry:
        """Immediate deletion as the API server does it: the last copy carries a deletion
        timestamp and grace 0; a pod that was Terminating is first updated to grace 0 (a
        watch sees MODIFIED, then DELETED)."""
        now = self.now()

        def stamp(obj: dict[str, Any]) -> None:
            obj["metadata"]["deletionTimestamp"] = now
            obj["metadata"]["deletionGracePeriodSeconds"] = 0

        if terminating:
            self.store.mutate(PODS, namespace, name, stamp)
        return self.store.remove(PODS, namespace, name, last=stamp)

    def finish_pod(self, namespace: str, name: str, uid: str) -> None:
        """The kubelet confirms the pod is gone (its DELETE with grace 0): the object goes."""
        with self.lock:
            entry = self.store.get(PODS, namespace, name)
            if entry is not None and entry.meta.get("uid") == uid:
                self._remove_pod(namespace, name, bool(entry.meta.get("deletionTimestamp")))

    def delete_namespace(self, name: str) -> Entry:
        """Terminating first; the namespace controller removes its content, then it."""
        with self.lock:
            entry = self.store.require(NAMESPACES, "", name)
            if entry.obj.get("status", {}).get("phase") == "Terminating":
                return entry
            now = self.now()

            def terminate(obj: dict[str, Any]) -> None:
                obj["metadata"]["deletionTimestamp"] = now
                obj["status"]["phase"] = "Terminating"

            result = self.store.mutate(NAMESPACES, "", name, terminate)
            assert result is not None
            self.world.schedule(0, lambda: self._empty_namespace(name))
            return result

    def _empty_namespace(self, name: str) -> None:
        from kubesim.resources import RESOURCES

        for res in RESOURCES.values():
            if not res.namespaced:
                continue
            for entry in self.store.list(res, name):
                if res is PODS:
                    self.delete_pod(name, entry.meta["name"])
                else:
                    self.store.remove(res, name, entry.meta["name"])
        if not self.store.list(PODS, name) and self.store.get(NAMESPACES, "", name) is not None:
            self.store.remove(NAMESPACES, "", name)

    def namespace_emptied(self, name: str) -> None:
        ns = self.store.get(NAMESPACES, "", name)
        terminating = ns is not None and ns.obj.get("status", {}).get("phase") == "Terminating"
        if terminating and not self.store.list(PODS, name):
            self.store.remove(NAMESPACES, "", name)

    def add_pdb(
        self,
        name: str,
        namespace: str,
        selector_labels: dict[str, str],
        min_available: int | str | None = None,
        max_unavailable: int | str | None = None,
        synced: bool = True,
    ) -> dict[str, Any]:
        """A PodDisruptionBudget; ``synced=False`` leaves it for the disruption controller
        (evictions answer "still being processed" until it syncs)."""
        with self.lock:
            self._ensure_namespace(namespace)
            obj = workload_objects.pdb_object(
                namespace, name, selector_labels, min_available, max_unavailable
            )
            self.store.create(PDBS, obj)
            if synced:
                self.world.behaviours.disruption.sync(self.whole, namespace, name)
            entry = self.store.require(PDBS, namespace, name)
            return entry.copy()

    def add_secret(
        self, namespace: str, name: str, data: dict[str, bytes | str], type_: str = "Opaque"
    ) -> dict[str, Any]:
        with self.lock:
            self._ensure_namespace(namespace)
            return self.store.create(
                SECRETS, objects.secret_object(namespace, name, data, type_)
            ).copy()

    def add_configmap(self, namespace: str, name: str, data: dict[str, str]) -> dict[str, Any]:
        with self.lock:
            self._ensure_namespace(namespace)
            return self.store.create(
                CONFIGMAPS, objects.configmap_object(namespace, name, data)
            ).copy()
