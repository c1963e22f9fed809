"""The etcd quorum guard: may a control plane leave its cluster now?

etcd changes membership only while a majority of its members is healthy, and `kubeadm reset`'s
remove-etcd-member phase only warns when the removal fails, then wipes the member anyway
(cmd/kubeadm/app/cmd/phases/reset/removeetcdmember.go). So every *other* control plane must be
Ready, and where the cluster runs etcd and kube-apiserver as static pods (kubeadm's stacked
control plane), their mirror pods `etcd-<node>` and `kube-apiserver-<node>` must be Ready too.

Costs one API call whatever the cluster's size: the control-plane mirror pods by label selector
(`tier=control-plane`, as kubeadm labels them); the control planes were already listed.
"""

from __future__ import annotations

from joinops.clusters.kube import KubeCluster
from joinops.requests.model import NodeFacts
from joinops.rules import texts as rule_texts

STATIC_COMPONENTS = ("etcd", "kube-apiserver")


def mirror_pod_name(component: str, node: str) -> str:
    return f"{component}-{node}"


def unhealthy_peers(
    source: KubeCluster,
    node: str,
    control_planes: list[NodeFacts] | tuple[NodeFacts, ...],
    pods: dict[str, bool] | None = None,
) -> list[str]:
    """The other control planes (and their static pods) that are not Ready, in words.
    `pods`: the control-plane mirror pods, when the caller listed them already.

    Raises ClusterError when the pods cannot be listed: never allowed by default."""
    others = [cp for cp in control_planes if cp.name != node]
    if not others:
        return []
    pods = source.control_plane_pods() if pods is None else pods
    names = [cp.name for cp in control_planes]
    static = [
        component
        for component in STATIC_COMPONENTS
        if any(mirror_pod_name(component, name) in pods for name in names)
    ]
    problems = []
    for peer in others:
        if not peer.ready:
            problems.append(rule_texts.peer_node_not_ready(peer.name))
        for component in static:
            pod = mirror_pod_name(component, peer.name)
            if pod not in pods:
                problems.append(rule_texts.peer_pod_missing(pod))
            elif not pods[pod]:
                problems.append(rule_texts.peer_pod_not_ready(pod))
    return problems
