"""What an arriving host is: read once it answers, and whether the rules allow the proposed move.

`probe` reads the cluster a kubeconfig file of the hosts directory names: its version and its
nodes (three API calls, whatever the host). `proposal` runs the ordinary rule check of moving the
host's single node into `arrivals.propose.to`, so the announcement says what a click would get.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from kubernetes.utils.quantity import parse_quantity

from joinops.clusters import pages
from joinops.clusters.kube import KubeCluster, node_facts
from joinops.requests.asks import MigrationAsk
from joinops.requests.model import Role
from joinops.rules.check import check
from joinops.rules.findings import refusals

GIB = 1024**3


@dataclass(frozen=True)
class HostNode:
    name: str
    architecture: str
    cpu: str  # cores, as the node reports its capacity
    memory_gib: float
    control_plane: bool


@dataclass(frozen=True)
class HostFacts:
    cluster: str
    version: str
    nodes: tuple[HostNode, ...]

    @property
    def node(self) -> HostNode | None:
        """The host's node, when the cluster is a single-node one (the only kind proposed)."""
        return self.nodes[0] if len(self.nodes) == 1 else None

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> HostFacts | None:
        if not text:
            return None
        raw = json.loads(text)
        return cls(raw["cluster"], raw["version"], tuple(HostNode(**n) for n in raw["nodes"]))


@dataclass(frozen=True)
class Proposal:
    """The proposed move and what the rules say about it now."""

    node: str
    target: str
    role: str
    allowed: bool
    reasons: tuple[str, ...] = field(default_factory=tuple)  # the refusals, when not allowed

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Proposal | None:
        if not text:
            return None
        raw: dict[str, Any] = json.loads(text)
        return cls(**{**raw, "reasons": tuple(raw.get("reasons") or ())})


def probe(cluster: KubeCluster) -> HostFacts:
    """The host's version and nodes; raises the cluster errors (unreachable, forbidden…)."""
    version = cluster.version()
    listed = pages.list_all(cluster, "nodes", cluster.core.list_node)
    return HostFacts(cluster.name, str(version), tuple(_node(n) for n in listed.items))


def _node(node: Any) -> HostNode:
    facts = node_facts(node)
    capacity = (node.status.capacity or {}) if node.status else {}
    memory = float(parse_quantity(capacity.get("memory", "0"))) / GIB
    return HostNode(
        facts.name,
        facts.architecture,
        str(capacity.get("cpu", "?")),
        round(memory, 1),
        facts.is_control_plane,
    )


def proposal(facts: HostFacts, host: KubeCluster, target: KubeCluster, role: str) -> Proposal:
    """The rule check of moving the host's node into `target` as `role` (as a request would)."""
    node = facts.node
    assert node is not None, "only a single-node host is proposed"
    ask = MigrationAsk(node.name, host.name, target.name, Role(role))
    verdict = check(ask, host, target)
    reasons = tuple(f.text for f in refusals(verdict.findings))
    return Proposal(node.name, target.name, role, verdict.allowed, reasons)
