"""Why a worker could not make a cluster's Ignition file now (it checks again when it runs)."""

from __future__ import annotations

from joinops.clusters.kube import KubeCluster
from joinops.errors import ClusterError
from joinops.ignition import texts as ignition_texts
from joinops.requests.model import Role
from joinops.rules import texts as rule_texts


def refusals(cluster: KubeCluster, role: Role) -> list[str]:
    """The reasons, one line each; none when the file can be made."""
    try:
        facts = cluster.facts()
    except ClusterError as e:
        return [rule_texts.cluster_unusable(e.cluster, e.detail)]
    if role is not Role.CONTROL_PLANE:
        return []
    if not facts.control_plane_endpoint:
        return [ignition_texts.no_control_plane_endpoint(cluster.name)]
    if not any(cp.ready for cp in facts.control_planes):
        return [ignition_texts.no_ready_control_plane(cluster.name)]
    return []
