"""Finding which cluster each node of a batch is in: one node list per candidate cluster (one
get by name per cluster for a single node), never one lookup per node and cluster."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from joinops.clusters.registry import ClusterAccess
from joinops.errors import ClusterError
from joinops.rules import texts as rule_texts
from joinops.rules.findings import Finding, Severity


@dataclass(frozen=True)
class Listed:
    """One cluster's nodes as one list showed them: names, and which are control planes."""

    names: frozenset[str]
    control_planes: frozenset[str]


def list_nodes(registry: ClusterAccess, cluster: str) -> Listed | None:
    """One list of the cluster's nodes; None when the cluster does not answer."""
    kube = registry.get(cluster)
    try:
        listing = kube.call("list", "nodes", kube.core.list_node)
    except ClusterError:
        return None
    names = {str(n.metadata.name) for n in listing.items}
    planes = {
        str(n.metadata.name)
        for n in listing.items
        if "node-role.kubernetes.io/control-plane" in (n.metadata.labels or {})
    }
    return Listed(frozenset(names), frozenset(planes))


def locate(
    nodes: list[str], target: str, registry: ClusterAccess
) -> tuple[dict[str, str], list[Finding], dict[str, Listed]]:
    """Find each node's cluster with one node list per candidate cluster (not one lookup per
    node and cluster); a name in no cluster, or in two, is a refusal."""
    candidates = [c for c in registry.names if c != target]
    listed: dict[str, Listed] = {}
    if len(nodes) == 1:  # one node: a get by name per cluster costs as many requests, fewer bytes
        hits = _get_by_name(nodes[0], candidates, registry)
    else:
        with ThreadPoolExecutor(8) as pool:
            lists = list(pool.map(lambda c: list_nodes(registry, c), candidates))
        found = dict(zip(candidates, lists, strict=True))
        listed = {c: v for c, v in found.items() if v is not None}
        hits = [(n, c) for n in nodes for c, v in listed.items() if n in v.names]
    sources: dict[str, str] = {}
    findings = []
    for node in nodes:
        where = [c for n, c in hits if n == node]
        if len(where) == 1:
            sources[node] = where[0]
        elif not where:
            findings.append(
                Finding(
                    Severity.REFUSAL,
                    "node-missing",
                    rule_texts.batch_node_nowhere(node, candidates),
                )
            )
        else:
            findings.append(
                Finding(
                    Severity.REFUSAL, "ambiguous-node", rule_texts.batch_node_ambiguous(node, where)
                )
            )
    return sources, findings, listed


def _get_by_name(node: str, clusters: list[str], registry: ClusterAccess) -> list[tuple[str, str]]:
    def present(cluster: str) -> bool:
        try:
            return registry.get(cluster).get_node(node) is not None
        except ClusterError:
            return False

    with ThreadPoolExecutor(8) as pool:
        found = list(pool.map(present, clusters))
    return [(node, c) for c, hit in zip(clusters, found, strict=True) if hit]
