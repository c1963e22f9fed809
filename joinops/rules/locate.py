"""Finding which cluster each node of a batch is in: one node list per candidate cluster (one
get by name per cluster for a single node), never one lookup per node and cluster. A name in no
cluster gets the names close to it (a single node's lookup then lists the clusters' nodes)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from joinops.closeness import close_names
from joinops.clusters import pages
from joinops.clusters.registry import ClusterAccess
from joinops.errors import ClusterError
from joinops.rules import texts as rule_texts
from joinops.rules.findings import Finding, Severity

NODE_MISSING = "node-missing"  # a name in none of the sources looked in
IN_TARGET = "in-target"  # a name in no source, but in the target: moved there already?


@dataclass(frozen=True)
class Listed:
    """One cluster's nodes as one list showed them: names, and which are control planes."""

    names: frozenset[str]
    control_planes: frozenset[str]


def list_nodes(registry: ClusterAccess, cluster: str) -> Listed | None:
    """One list of the cluster's nodes; None when the cluster does not answer."""
    kube = registry.get(cluster)
    try:
        listing = pages.list_all(kube, "nodes", kube.core.list_node)
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
        listed = _list_all(candidates, registry)
        hits = [(n, c) for n in nodes for c, v in listed.items() if n in v.names]
    sources: dict[str, str] = {}
    findings = []
    known: KnownNames | None = None  # read once a name is in no source
    for node in nodes:
        where = [c for n, c in hits if n == node]
        if len(where) == 1:
            sources[node] = where[0]
        elif not where:
            known = known or _known_names(candidates, target, registry, listed)
            findings.append(_nowhere(node, candidates, target, known))
        else:
            findings.append(
                Finding(
                    Severity.REFUSAL, "ambiguous-node", rule_texts.batch_node_ambiguous(node, where)
                )
            )
    return sources, findings, listed


@dataclass(frozen=True)
class KnownNames:
    """The node names of the sources looked in, and of the target."""

    sources: frozenset[str]
    target: frozenset[str]


def _known_names(
    sources: list[str], target: str, registry: ClusterAccess, listed: dict[str, Listed]
) -> KnownNames:
    """What was listed already, and what was not (a single node's lookup listed nothing)."""
    found = {**_list_all([c for c in [*sources, target] if c not in listed], registry), **listed}
    in_sources = (name for c in sources if c in found for name in found[c].names)
    in_target = found[target].names if target in found else frozenset()
    return KnownNames(frozenset(in_sources), in_target)


def _nowhere(node: str, looked_in: list[str], target: str, known: KnownNames) -> Finding:
    """A name in no source: already in the target, or a typo (with the names close to it)."""
    if node in known.target:
        return Finding(Severity.REFUSAL, IN_TARGET, rule_texts.batch_node_in_target(node, target))
    close = close_names(node, sorted(known.sources))
    text = rule_texts.batch_node_nowhere(node, looked_in, close)
    return Finding(Severity.REFUSAL, NODE_MISSING, text)


def _list_all(clusters: list[str], registry: ClusterAccess) -> dict[str, Listed]:
    """One node list per cluster, read at once; those that did not answer are left out."""
    with ThreadPoolExecutor(8) as pool:
        lists = list(pool.map(lambda c: list_nodes(registry, c), clusters))
    return {c: v for c, v in zip(clusters, lists, strict=True) if v is not None}


def _get_by_name(node: str, clusters: list[str], registry: ClusterAccess) -> list[tuple[str, str]]:
    def present(cluster: str) -> bool:
        try:
            return registry.get(cluster).get_node(node) is not None
        except ClusterError:
            return False

    with ThreadPoolExecutor(8) as pool:
        found = list(pool.map(present, clusters))
    return [(node, c) for c, hit in zip(clusters, found, strict=True) if hit]
