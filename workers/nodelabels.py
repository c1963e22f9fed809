"""The node's own labels and taints, carried into the target when `agent.keep_labels_and_taints`.

Own means set by the cluster's operators, not by Kubernetes: keys under `kubernetes.io` or
`k8s.io` (the kubelet's `kubernetes.io/hostname`, `node.kubernetes.io/*` conditions, roles,
topology) and joinops's own `joinops.io` stay behind, except `node-restriction.kubernetes.io/`,
the prefix meant for administrators' labels. Taints go into the JoinConfiguration
(`nodeRegistration.taints`: on the node from its registration, before any pod is scheduled
there); labels are set at the clean-up, with the role label.
"""

from __future__ import annotations

from typing import Any

from joinops.clusters.kube import KubeCluster

CLUSTER_DOMAINS = ("kubernetes.io", "k8s.io", "joinops.io")
ADMIN_PREFIX = "node-restriction.kubernetes.io"


def cluster_owned(key: str) -> bool:
    prefix = key.split("/", 1)[0] if "/" in key else ""
    if prefix == ADMIN_PREFIX:
        return False
    return any(prefix == d or prefix.endswith("." + d) for d in CLUSTER_DOMAINS)


def read_own(source: KubeCluster, node: str) -> dict[str, Any]:
    """{"labels": {...}, "taints": [...]} of the node in the source: one GET."""
    found = source.call("get", f"nodes/{node}", source.core.read_node, node)
    labels = {k: v for k, v in (found.metadata.labels or {}).items() if not cluster_owned(k)}
    taints = [
        {k: v for k, v in (("key", t.key), ("value", t.value), ("effect", t.effect)) if v}
        for t in (found.spec.taints or [] if found.spec else [])
        if not cluster_owned(t.key)
    ]
    return {"labels": labels, "taints": taints}
