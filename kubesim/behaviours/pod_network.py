"""Pod addresses, as a node's CNI hands them out.

Every pod that is not on the host network gets an address from its node's `spec.podCIDR`
(the cluster-wide counter when the node has none). On a host with the bridge plugin
(`Host.bridge_cni`, flannel's set-up) the first pod gives `cni0` the first address of the
node's pod CIDR; the bridge and its address outlive `kubeadm reset`, and once the node is in a
cluster that gave it another pod CIDR every new pod fails at sandbox creation with the bridge
plugin's own error (containernetworking/plugins `bridge.go`, `ensureAddr`: "%q already has an IP
address different from %v"; flannel-io/flannel#1850 is a node moved between clusters). The pod
stays Pending (ContainerCreating) and an Event `FailedCreatePodSandBox` says why, as the
kubelet reports it.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

from kubesim import objects, pod_objects
from kubesim.entries import new_uid
from kubesim.resources import EVENTS, NODES, PODS

if TYPE_CHECKING:
    from kubesim.hosts import Host
    from kubesim.protocols import SimCluster

BRIDGE = "cni0"


def address(cluster: SimCluster, host: Host) -> tuple[str, str]:
    """(the pod's address, "") or ("", why the sandbox cannot be made)."""
    node = cluster.store.get(NODES, "", host.name)
    cidr = (node.obj.get("spec") or {}).get("podCIDR") if node else None
    if not cidr:
        return cluster.next_pod_ip(), ""
    network = ipaddress.ip_network(cidr, strict=False)
    gateway = f"{network[1]}/{network.prefixlen}"
    if host.bridge_cni:
        current = host.interfaces.setdefault(BRIDGE, gateway)
        host.interfaces.setdefault("flannel.1", f"{network[0]}/32")
        if current != gateway:
            return "", (
                'plugin type="bridge" failed (add): failed to set bridge addr: '
                f'"{BRIDGE}" already has an IP address different from {gateway}'
            )
    host.pods_addressed += 1
    usable = max(network.num_addresses - 3, 1)
    return str(network[2 + (host.pods_addressed - 1) % usable]), ""


def sandbox_failed(cluster: SimCluster, namespace: str, name: str, problem: str) -> None:
    entry = cluster.store.get(PODS, namespace, name)
    if entry is None:
        return
    cluster.store.mutate(
        PODS, namespace, name, lambda obj: pod_objects.set_pod_waiting(obj, "ContainerCreating", "")
    )
    message = (
        "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network "
        f'for sandbox "{new_uid()[:12]}": {problem}'
    )
    cluster.store.create(
        EVENTS,
        objects.event_object(
            namespace, "Pod", name, entry.meta.get("uid", ""), "FailedCreatePodSandBox", message
        ),
    )
