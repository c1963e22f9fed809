"""A cluster's nodes and their kubelets: machines added by a test, hosts that joined."""

from __future__ import annotations

from typing import Any

from kubesim import node_ipam, node_objects
from kubesim.behaviours import static_pods
from kubesim.cluster_reads import ClusterReads
from kubesim.entries import Entry, new_uid
from kubesim.hosts import CONTROL_PLANE_LABEL, Host, NodeSpec
from kubesim.node_ipam import NodeIpam
from kubesim.resources import EVENTS, NODES, PODS
from kubesim.selectors import parse_label_selector


class ClusterNodes(ClusterReads):
    ipam: NodeIpam

    def _new_host(self, spec: NodeSpec) -> Host:
        self.world.host_count += 1
        n = self.world.host_count
        return Host(
            name=spec.name,
            kubelet_version=spec.kubelet_version or self.version,
            architecture=spec.architecture,
            operating_system=spec.operating_system,
            os_image=spec.os_image,
            container_runtime=spec.container_runtime,
            internal_ip=f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}",
            cluster=self.name,
            role=spec.role,
            history=[self.name],
        )

    def _pod_cidrs(self, node: str) -> list[str]:
        """The ranges the controller manager's allocator gives a new node (kubesim.node_ipam)."""
        return self.ipam.allocate(node)

    def _cidr_not_available(self, node: str, cidrs: list[str], now: str) -> None:
        """No range was left: the allocator records the Event on the node."""
        if cidrs or not self.ipam.enabled:
            return
        event = node_ipam.node_event(node, node_ipam.CIDR_NOT_AVAILABLE, now, new_uid()[:16])
        self.store.create(EVENTS, event)

    def release_pod_cidrs(self, node: str) -> None:
        """A Node was deleted: its ranges are free, and go to a node still waiting for one."""
        if self.ipam.release(node):
            self.world.schedule(0, self._assign_waiting)

    def _assign_waiting(self) -> None:
        with self.lock:
            while (name := self.ipam.next_waiting()) is not None:
                entry = self.store.get(NODES, "", name)
                if entry is None or entry.obj.get("spec", {}).get("podCIDR"):
                    continue
                self._give_pod_cidrs(name, self.ipam.allocate(name))
                return  # one node per freed range

    def _give_pod_cidrs(self, name: str, cidrs: list[str]) -> None:
        if cidrs:  # else back in the queue: nothing free after all
            self.store.mutate(NODES, "", name, lambda obj: _set_pod_cidrs(obj, cidrs))

    def add_node(self, spec: NodeSpec) -> dict[str, Any]:
        """A machine running a kubelet that registered as ``spec.name``."""
        return self._add_node(spec, self.now()).copy()

    def _add_node(self, spec: NodeSpec, now: str) -> Entry:
        with self.lock:
            if self.store.get(NODES, "", spec.name) is not None:
                from kubesim.errors import already_exists

                raise already_exists("nodes", spec.name)
            host = self._new_host(spec)
            self.world.hosts.append(host)
            self.hosts[spec.name] = host
            cidrs = self._pod_cidrs(spec.name)
            obj = node_objects.node_object(
                host,
                cidrs,
                "ready" if spec.ready else "not-ready",
                now,
                labels=spec.labels,
                taints=spec.taints,
                unschedulable=spec.unschedulable,
            )
            entry = self.store.create(NODES, obj)
            self._cidr_not_available(spec.name, cidrs, now)
            if spec.role == "control-plane":
                static_pods.add_control_plane_pods(self.whole, host, ready=spec.ready)
            return entry

    def add_nodes(self, n: int, prefix: str = "w", start: int = 1, **kwargs: Any) -> list[str]:
        """``n`` nodes named ``{prefix}-{i}`` (NodeSpec keyword arguments apply to all)."""
        names = [f"{prefix}-{i}" for i in range(start, start + n)]
        now = self.now()
        with self.lock:
            for name in names:
                self._add_node(NodeSpec(name, **kwargs), now)
        return names

    def register_host(
        self, host: Host, control_plane: bool, taints: list[dict[str, Any]] | None = None
    ) -> None:
        """A host that joined: its Node registers NotReady, then its kubelet reports Ready.

        A control plane, as kubeadm does it: the kubelet starts (the node turns Ready) before
        the control-plane-join phase adds the etcd member, starts the static pods and marks the
        node (`World.control_plane_phase_seconds` after Ready; `World.hold_control_plane_phase`
        holds it)."""
        with self.lock:
            host.role = "worker"  # the control-plane label comes with the control-plane phase
            host.cluster = self.name
            host.kubelet_running = True
            host.history.append(self.name)
            self.hosts[host.name] = host
            cidrs = self._pod_cidrs(host.name)
            # kubeadm registers the node with nodeRegistration.taints (the control-plane taint
            # comes with the control-plane phase)
            obj = node_objects.node_object(host, cidrs, "not-ready", self.now(), taints=taints)
            self.store.create(NODES, obj)
            self._cidr_not_available(host.name, cidrs, self.now())
            self.world.schedule(
                self.world.node_ready_seconds, lambda: self._node_ready(host, control_plane)
            )

    def _node_ready(self, host: Host, control_plane: bool = False) -> None:
        if self.hosts.get(host.name) is host and host.kubelet_running and not host.never_ready:
            self.set_node_state(host.name, "ready")
            if control_plane:
                self.world.control_plane_phase(
                    lambda: static_pods.finish_control_plane_join(self.whole, host)
                )

    def set_node_state(self, name: str, state: str) -> None:
        """ready, not-ready or unknown: conditions and the lifecycle taints that go with it."""
        now = self.now()
        self.store.mutate(NODES, "", name, lambda obj: node_objects.set_node_state(obj, state, now))

    def stop_kubelet(self, name: str) -> None:
        """The node's kubelet stops: Ready=Unknown, unreachable taints; its pods stay as they
        are (a terminating pod stays Terminating)."""
        with self.lock:
            host = self.hosts.get(name)
            if host is not None:
                host.kubelet_running = False
            self.set_node_state(name, "unknown")
            static_pods.set_ready(
                self.whole, name, False
            )  # the node controller marks them NotReady

    def start_kubelet(self, name: str) -> None:
        with self.lock:
            host = self.hosts.get(name)
            if host is None:
                raise KeyError(f"{name} has no kubelet in {self.name}")
            host.kubelet_running = True
            self.set_node_state(name, "ready")
            static_pods.set_ready(self.whole, name, True)
            for entry in self.store.list(PODS):
                if entry.obj.get("spec", {}).get("nodeName") == name:
                    self.world.behaviours.kubelet.pod_changed(self.whole, entry)

    def host_of(self, node: str) -> Host | None:
        return self.hosts.get(node)

    def control_plane_nodes(self) -> list[str]:
        sel = parse_label_selector(CONTROL_PLANE_LABEL)
        return [e.meta["name"] for e in self.store.list(NODES, labels=sel)]


def _set_pod_cidrs(obj: dict[str, Any], cidrs: list[str]) -> None:
    spec = obj.setdefault("spec", {})
    spec["podCIDR"], spec["podCIDRs"] = cidrs[0], cidrs
