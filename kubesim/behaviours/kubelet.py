"""Each node's kubelet: starts pods bound to it, finishes terminating ones after the grace."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubesim import pod_objects
from kubesim.behaviours import pod_network
from kubesim.entries import Change, Entry
from kubesim.resources import PODS

if TYPE_CHECKING:
    from kubesim.hosts import Host
    from kubesim.protocols import SimCluster, SimWorld


class Kubelet:
    def __init__(self, world: SimWorld) -> None:
        self.world = world
        self._starting: set[tuple[str, str]] = set()
        self._finishing: set[tuple[str, str]] = set()

    def running_host(self, cluster: SimCluster, node: str) -> Host | None:
        host = cluster.hosts.get(node)
        if host is None or not host.kubelet_running or host.cluster != cluster.name:
            return None
        return host

    def on_pod(self, cluster: SimCluster, change: Change) -> None:
        if change.type != "DELETED":
            self.pod_changed(cluster, change.new)

    def pod_changed(self, cluster: SimCluster, entry: Entry) -> None:
        node = entry.obj.get("spec", {}).get("nodeName")
        if not node or self.running_host(cluster, node) is None:
            return
        meta = entry.meta
        key = (cluster.name, meta.get("uid", ""))
        namespace, name, uid = meta.get("namespace", ""), meta["name"], meta.get("uid", "")
        if meta.get("deletionTimestamp"):
            if key not in self._finishing:
                self._finishing.add(key)
                self.world.schedule(
                    self.world.pod_grace_seconds,
                    lambda: self._finish(cluster, namespace, name, uid),
                )
        elif entry.obj.get("status", {}).get("phase") == "Pending" and key not in self._starting:
            self._starting.add(key)
            self.world.schedule(
                self.world.pod_start_seconds, lambda: self._start(cluster, namespace, name, uid)
            )

    def _current(self, cluster: SimCluster, namespace: str, name: str, uid: str) -> Entry | None:
        entry = cluster.store.get(PODS, namespace, name)
        if entry is None or entry.meta.get("uid") != uid:
            return None
        return entry

    def _finish(self, cluster: SimCluster, namespace: str, name: str, uid: str) -> None:
        self._finishing.discard((cluster.name, uid))
        entry = self._current(cluster, namespace, name, uid)
        if entry is None:
            return
        if self.running_host(cluster, entry.obj["spec"]["nodeName"]) is None:
            return  # the kubelet stopped meanwhile: the pod stays Terminating
        cluster.finish_pod(namespace, name, uid)

    def _start(self, cluster: SimCluster, namespace: str, name: str, uid: str) -> None:
        self._starting.discard((cluster.name, uid))
        entry = self._current(cluster, namespace, name, uid)
        if entry is None or entry.meta.get("deletionTimestamp"):
            return
        if entry.obj.get("status", {}).get("phase") != "Pending":
            return
        host = self.running_host(cluster, entry.obj["spec"]["nodeName"])
        if host is None:
            return
        unpullable = self._unpullable(entry.obj, host)
        if unpullable:
            cluster.store.mutate(
                PODS,
                namespace,
                name,
                lambda obj: pod_objects.set_pod_waiting(
                    obj, "ImagePullBackOff", f'Back-off pulling image "{unpullable}"'
                ),
            )
            return  # tried again by `retry_pulls` (the kubelet's back-off)
        if self.world.behaviours.hosts.run_special(cluster, host, entry):
            return
        self.set_running(cluster, host, namespace, name)

    @staticmethod
    def _unpullable(pod: dict[str, object], host: Host) -> str:
        spec = pod.get("spec")
        containers = spec.get("containers", []) if isinstance(spec, dict) else []
        images = [str(c.get("image", "")) for c in containers]
        return next((i for i in images if i in host.unpullable_images), "")

    def retry_pulls(self, cluster: SimCluster, host: Host) -> None:
        """The kubelet's image back-off ran out: its Pending pods are tried again."""
        for entry in cluster.store.list(PODS):
            if entry.obj.get("spec", {}).get("nodeName") == host.name:
                self.pod_changed(cluster, entry)

    def set_running(self, cluster: SimCluster, host: Host, namespace: str, name: str) -> None:
        now = cluster.now()
        if entry_host_network(cluster, namespace, name):
            ip, problem = host.internal_ip, ""
        else:
            ip, problem = pod_network.address(cluster, host)
        if problem:
            pod_network.sandbox_failed(cluster, namespace, name, problem)
            return
        cluster.store.mutate(
            PODS, namespace, name, lambda obj: pod_objects.set_pod_running(obj, host, ip, now)
        )

    def set_finished(
        self,
        cluster: SimCluster,
        host: Host,
        namespace: str,
        name: str,
        ok: bool,
        message: str = "",
    ) -> None:
        now = cluster.now()
        cluster.store.mutate(
            PODS,
            namespace,
            name,
            lambda obj: pod_objects.set_pod_finished(obj, host, now, ok, message),
        )


def entry_host_network(cluster: SimCluster, namespace: str, name: str) -> bool:
    entry = cluster.store.get(PODS, namespace, name)
    return bool(entry and entry.obj.get("spec", {}).get("hostNetwork"))
