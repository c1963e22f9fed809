"""What an operator asks for, and the checks on the words alone (no cluster is read)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from joinops.closeness import the_close_name
from joinops.errors import UsageError
from joinops.requests.model import Role, node_name_problem


@dataclass(frozen=True)
class MigrationAsk:
    """One node, from one cluster to another, in a role."""

    node: str
    source: str
    target: str
    role: Role = Role.WORKER
    force: bool = False  # delete pods no controller recreates (kubectl drain --force)


def unknown_cluster(name: str, known: Sequence[str]) -> UsageError:
    """Named with the known clusters; a guess only when one of them is clearly what was meant."""
    close = the_close_name(name, known)
    hint = f" Did you mean {close}?" if close else ""
    return UsageError(f"unknown cluster {name!r}.{hint} Known clusters: {', '.join(known)}")


def validate_ask(ask: MigrationAsk, known_clusters: Sequence[str]) -> None:
    """Raise UsageError for input that no cluster needs to be asked about."""
    problem = node_name_problem(ask.node)
    if problem:
        raise UsageError(f"{ask.node!r} is not a valid node name: {problem}")
    for cluster in (ask.source, ask.target):
        if cluster not in known_clusters:
            raise unknown_cluster(cluster, known_clusters)
    if ask.source == ask.target:
        raise UsageError(
            f"source and target are both {ask.source}: a node moves between two different clusters"
        )
