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

CNI_STATE = "/var/lib/cni/"  # the CNI plugins' IPAM state, kept by `kubeadm reset`
INITIAL = (CNI, IPTABLES, KUBECONFIG, CNI_STATE)  # plus IPVS with `ipvsadm` (Host.ipvs)
# the interfaces CNIs make; `kubeadm reset` leaves them (Host.interfaces)
CNI_INTERFACES = ("cni0", "flannel.1", "vxlan.calico", "kube-ipvs0")

# joinops's virtual-IP layout (joinops/ignition/virtual_ip.py): keepalived holds the VIP, a
# local nginx listens on the API port; the marker file says the host carries that layout
VIP_MARKER = "/etc/joinops/virtual-ip"
VIP_UNITS = {"keepalived.service": "keepalived", "ocne-nginx.service": "nginx"}  # unit -> process

# the ports `kubeadm join` preflight checks, by the component that holds them on a node
KUBELET_PORT = 10250
CONTROL_PLANE_PORTS = {
    2379: "etcd",
    2380: "etcd",
    10257: "kube-controller",
    10259: "kube-scheduler",
}
KUBERNETES_PROCESSES = frozenset({"kubelet", "kube-apiserver", *CONTROL_PLANE_PORTS.values()})


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
    # What the node agent's probes read on the host (kubesim.behaviours.host_probe):
    addresses: list[str] = field(default_factory=list)  # its interfaces' addresses
    # /var/lib/kubelet/kubeadm-flags.env (flag -> value); `kubeadm reset` deletes it and
    # `kubeadm join` writes it from the JoinConfiguration's kubeletExtraArgs and criSocket
    kubelet_flags: dict[str, str] = field(default_factory=dict)
    runtime_sockets: list[str] = field(default_factory=list)  # CRI sockets present
    cgroup_driver: str = "systemd"  # the container runtime's
    busy_ports: dict[int, str] = field(default_factory=dict)  # port -> a non-Kubernetes process
    unreachable: set[str] = field(default_factory=set)  # "host:port" it cannot connect to
    cpus: int = 4
    unpullable_images: set[str] = field(default_factory=set)  # pulls fail (ImagePullBackOff)
    # The bridge CNI plugin (flannel's): `cni0` takes the first address of the node's pod CIDR
    # at the first pod and keeps it across `kubeadm reset` (flannel-io/flannel#1850)
    bridge_cni: bool = False
    interfaces: dict[str, str] = field(default_factory=dict)  # name -> address/prefix
    pods_addressed: int = 0  # pod addresses handed out from the node's pod CIDR
    units: dict[str, str] = field(default_factory=dict)  # systemd unit -> running|stopped|disabled
    files: set[str] = field(default_factory=set)  # marker files (VIP_MARKER)
    # /etc/kubernetes/admin.conf cannot read kubeadm-config (expired: only `kubeadm upgrade`
    # renews it; or its server unreachable): `kubeadm reset` then leaves its etcd member
    admin_conf_expired: bool = False
    never_ready: bool = False  # its kubelet runs but never reports Ready (no CNI comes up)

    def __post_init__(self) -> None:
        digest = hashlib.sha256(self.name.encode()).hexdigest()
        self.machine_id = self.machine_id or digest[:32]
        d = digest[32:64]
        self.system_uuid = self.system_uuid or f"{d[:8]}-{d[8:12]}-{d[12:16]}-{d[16:20]}-{d[20:]}"
        self.boot_id = self.boot_id or new_uid()
        if not self.leftovers:
            self.leftovers = [*INITIAL, *([IPVS] if self.ipvs else [])]
        self.addresses = self.addresses or [self.internal_ip]
        self.runtime_sockets = self.runtime_sockets or [self.runtime_socket]
        self.kubelet_flags = self.kubelet_flags or {
            "container-runtime-endpoint": self.runtime_socket
        }
        self.interfaces = self.interfaces or {"eth0": f"{self.internal_ip}/16"}

    def give_vip_layout(self, port: int = 6443) -> None:
        """joinops's virtual-IP layout, as its Ignition leaves it: keepalived and the local
        nginx running and enabled, nginx listening on `port`, the marker file in place."""
        self.units.update(dict.fromkeys(VIP_UNITS, "running"))
        self.busy_ports[port] = VIP_UNITS["ocne-nginx.service"]
        self.files.add(VIP_MARKER)

    def held_ports(self) -> dict[int, str]:
        """Listening ports and their process: Kubernetes' own while it runs, and others (a
        unit's process only while its unit runs)."""
        stopped = {VIP_UNITS.get(u) for u, state in self.units.items() if state != "running"}
        held = {p: who for p, who in self.busy_ports.items() if who not in stopped}
        if self.kubelet_running:
            held.setdefault(KUBELET_PORT, "kubelet")
            if self.role == "control-plane":
                held.setdefault(6443, "kube-apiserver")
                for port, process in CONTROL_PLANE_PORTS.items():
                    held.setdefault(port, process)
        return held

    @property
    def kernel_version(self) -> str:
        machine = "aarch64" if self.architecture == "arm64" else "x86_64"
        return f"5.15.0-308.179.6.el9uek.{machine}"

    @property
    def runtime_socket(self) -> str:
        if self.container_runtime.startswith("containerd"):
            return "unix:///run/containerd/containerd.sock"
        return "unix:///var/run/crio/crio.sock"
