"""A stacked etcd's own membership, per simulated cluster: what `etcdctl member list` shows.

Modelled on etcd's membership (server/etcdserver/api/membership): each member has a uint64 ID,
a name and client URLs published once it started (a member added but never started shows an
empty name and no client URLs), peer URLs, and is a voting member or a learner. A member whose
etcd died stays in the list with what it published; only a health check shows it dead. Changes
to membership go through raft: without a majority of healthy voting members, `member add` and
`member remove` fail ("etcdserver: unhealthy cluster"), and so does the linearizable
`member list` of etcd 3.5+ ("context deadline exceeded").

The JSON is etcdctl's `-w json` (etcdctl/ctlv3/command/printer_json.go, which marshals the
gRPC MemberListResponse: a `header` with `cluster_id`, `member_id`, `raft_term`, and `members`
with `ID`, `name`, `peerURLs`, `clientURLs`, `isLearner` only when true; IDs as JSON numbers).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

PEER_PORT = 2380
CLIENT_PORT = 2379
UNHEALTHY = "etcdserver: unhealthy cluster"
NO_LEADER = "context deadline exceeded"


def member_id(name: str, peer_url: str) -> int:
    """A stable uint64, as etcd derives one from the peer URLs, cluster and time."""
    return int(hashlib.sha256(f"{name} {peer_url}".encode()).hexdigest()[:16], 16) or 1


@dataclass
class EtcdMember:
    name: str
    ip: str
    id: int = 0
    started: bool = True  # has it published its name and client URLs?
    healthy: bool = True  # does its endpoint answer a health check?
    learner: bool = False

    def __post_init__(self) -> None:
        self.id = self.id or member_id(self.name, self.peer_url)

    @property
    def peer_url(self) -> str:
        return f"https://{self.ip}:{PEER_PORT}"

    @property
    def client_url(self) -> str:
        return f"https://{self.ip}:{CLIENT_PORT}"

    def as_json(self) -> dict[str, object]:
        shown: dict[str, object] = {"ID": self.id, "peerURLs": [self.peer_url]}
        if self.started:
            shown["name"] = self.name
            shown["clientURLs"] = [self.client_url]
        if self.learner:
            shown["isLearner"] = True
        return shown


@dataclass
class EtcdMembers:
    """One cluster's member list (empty for an external etcd, which kubesim does not run)."""

    cluster_id: int
    members: list[EtcdMember] = field(default_factory=list)
    raft_term: int = 2

    def add(self, name: str, ip: str, healthy: bool = True) -> EtcdMember:
        """A started voting member (kubeadm's control-plane-join phase adds it, then it starts;
        its learner promotion is not modelled separately)."""
        self.members = [m for m in self.members if m.name != name or m.ip != ip]
        member = EtcdMember(name, ip, healthy=healthy)
        self.members.append(member)
        return member

    def named(self, name: str) -> EtcdMember | None:
        return next((m for m in self.members if m.name == name), None)

    def has_quorum(self) -> bool:
        voting = [m for m in self.members if not m.learner]
        alive = [m for m in voting if m.healthy and m.started]
        return len(alive) * 2 > len(voting)

    def remove(self, ident: int) -> str:
        """`etcdctl member remove`: "" when removed, else etcdctl's error."""
        if not self.has_quorum():
            return UNHEALTHY
        found = [m for m in self.members if m.id == ident]
        if not found:
            return f"etcdserver: member not found (member {ident:x})"
        self.members.remove(found[0])
        self.raft_term += 1
        return ""

    def list_json(self, answering: EtcdMember) -> str:
        header = {
            "cluster_id": self.cluster_id,
            "member_id": answering.id,
            "raft_term": self.raft_term,
        }
        members = [m.as_json() for m in self.members]
        return json.dumps({"header": header, "members": members}, separators=(",", ":"))

    def health_json(self) -> str:
        """`etcdctl endpoint health --cluster -w json`: the started members' client URLs."""
        rows = []
        for m in self.members:
            if not m.started:
                continue
            row: dict[str, object] = {"endpoint": m.client_url, "health": m.healthy}
            if m.healthy:
                row["took"] = "1.2ms"
            else:
                row["error"] = f"{m.client_url} is unhealthy: {NO_LEADER}"
            rows.append(row)
        return json.dumps(rows, separators=(",", ":"))
