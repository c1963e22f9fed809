"""Simulated machines: what a node is made of, independent of any cluster."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from kubesim.entries import new_uid

CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane"

# what `kubeadm reset` leaves on a machine (behaviours/host_cleanup.py cleans them)
CNI = "/etc/cni/net.d/10-calico.conflist"
IPTABLES = "iptables KUBE-* chains"
IPVS = "IPVS virtual servers"
KUBECONFIG = "/root/.kube/config"

INITIAL = (CNI, IPTABLES, KUBECONFIG)  # plus IPVS on hosts with `ipvsadm` (Host.ipvs)


@dataclass
class NodeSpec:
    """A node to create with a cluster (or with ``Cluster.add_node``)."""

    name: str
    role: str = "worker"  # "worker" or "control-plane"
    kubelet_version: str | None = None  # None: the cluster's version
    architecture: str = "amd64"
    operating_system: str = "linux"
    os_image: str = "Oracle Linux Server 9.5"
    container_runtime: str = "cri-o://1.31.1"
    ready: bool = True
    unschedulable: bool = False
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.role not in ("worker", "control-plane"):
            raise ValueError(f"role must be 'worker' or 'control-plane', not {self.role!r}")


@dataclass
class Host:
    """A machine. It is in at most one cluster at a time (``cluster``, a cluster name).

    ``kubelet_running`` is False once the machine was reset (or its kubelet stopped):
    its Node object, if any, goes NotReady and its pods are no longer run or finished.
    """

    name: str
    kubelet_version: str
    architecture: str
    operating_system: str
    os_image: str
    container_runtime: str
    internal_ip: str
    cluster: str | None = None
    role: str = "worker"
    kubelet_running: bool = True
    machine_id: str = ""
    system_uuid: str = ""
    boot_id: str = ""
    history: list[str] = field(default_factory=list)  # clusters it was in, in order
    ipvs: bool = False  # ipvsadm installed and kube-proxy in IPVS mode
    # what `kubeadm reset` leaves (kubesim.behaviours.host_cleanup), and what a unit cleaned
    leftovers: list[str] = field(default_factory=list)
    cleaned: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        digest = hashlib.sha256(self.name.encode()).hexdigest()
        self.machine_id = self.machine_id or digest[:32]
        d = digest[32:64]
        self.system_uuid = self.system_uuid or f"{d[:8]}-{d[8:12]}-{d[12:16]}-{d[16:20]}-{d[20:]}"
        self.boot_id = self.boot_id or new_uid()
        if not self.leftovers:
            self.leftovers = [*INITIAL, *([IPVS] if self.ipvs else [])]

    @property
    def kernel_version(self) -> str:
        machine = "aarch64" if self.architecture == "arm64" else "x86_64"
        return f"5.15.0-308.179.6.el9uek.{machine}"

    @property
    def runtime_socket(self) -> str:
        if self.container_runtime.startswith("containerd"):
            return "unix:///run/containerd/containerd.sock"
        return "unix:///var/run/crio/crio.sock"
