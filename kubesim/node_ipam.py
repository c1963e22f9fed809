"""Node IPAM as kube-controller-manager's range allocator does it (`--allocate-node-cidrs`, which
kubeadm sets when `networking.podSubnet` is given): each Node gets `spec.podCIDR(s)` cut from the
cluster CIDR at `--node-cidr-mask-size` (24 for IPv4, 64 for IPv6); a dual-stack podSubnet gives
one range of each family. When the range is used up the node gets none and the Event
`CIDRNotAvailable` is recorded for it; a deleted node's ranges are free again, and a node still
waiting for one gets it (the allocator retries nodes without a podCIDR).

Source read: kubernetes `pkg/controller/nodeipam/ipam/range_allocator.go` (`AllocateOrOccupyCIDR`,
`ReleaseCIDR`, `RecordNodeStatusChange(..., "CIDRNotAvailable")`) and `cidrset/cidr_set.go`
(`AllocateNext` hands ranges out in order from the next candidate; at most 16 bits of ranges).
Allocation here is O(1) amortised: ranges in order, then the lowest freed one.
"""

from __future__ import annotations

import heapq
import ipaddress
from collections import deque
from dataclasses import dataclass, field
from typing import Any

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

DEFAULT_MASK = {4: 24, 6: 64}
MAX_BITS_OF_RANGES = 16  # cidr_set.go: clusterSubnetMaxDiff


def pod_networks(pod_subnet: str) -> list[Network]:
    """The podSubnet's networks (comma-separated when dual-stack); malformed parts are skipped."""
    found: list[Network] = []
    for part in pod_subnet.split(","):
        try:
            found.append(ipaddress.ip_network(part.strip(), strict=False))
        except ValueError:
            continue
    return found


@dataclass
class CidrSet:
    """One family's cluster CIDR cut into ranges of `mask` bits."""

    network: Network
    mask: int
    handed: int = 0  # ranges 0..handed-1 were handed out at least once
    freed: list[int] = field(default_factory=list)  # a heap of released indexes

    @property
    def capacity(self) -> int:
        bits = max(0, self.mask - self.network.prefixlen)
        return 1 << min(bits, MAX_BITS_OF_RANGES)

    def take(self) -> int | None:
        if self.handed < self.capacity:
            self.handed += 1
            return self.handed - 1
        return heapq.heappop(self.freed) if self.freed else None

    def give_back(self, index: int) -> None:
        heapq.heappush(self.freed, index)

    def cidr(self, index: int) -> str:
        size = 1 << (self.network.max_prefixlen - self.mask)
        address = ipaddress.ip_address(int(self.network.network_address) + index * size)
        return f"{address}/{self.mask}"


class NodeIpam:
    """A cluster's node ranges: who holds which, and the nodes still waiting for one."""

    def __init__(self, pod_subnet: str, ipv4_mask: int = DEFAULT_MASK[4]) -> None:
        self.sets = [
            CidrSet(net, ipv4_mask if net.version == 4 else DEFAULT_MASK[6])
            for net in pod_networks(pod_subnet)
        ]
        self.held: dict[str, list[tuple[CidrSet, int]]] = {}
        self.waiting: deque[str] = deque()

    @property
    def enabled(self) -> bool:
        return bool(self.sets)

    def allocate(self, node: str) -> list[str]:
        """The node's podCIDRs, one per family; [] when any family is used up (it waits)."""
        if not self.sets:
            return []
        if node in self.held:
            return [s.cidr(i) for s, i in self.held[node]]
        taken: list[tuple[CidrSet, int]] = []
        for cidr_set in self.sets:
            index = cidr_set.take()
            if index is None:
                for s, i in taken:
                    s.give_back(i)
                self.waiting.append(node)
                return []
            taken.append((cidr_set, index))
        self.held[node] = taken
        return [s.cidr(i) for s, i in taken]

    def release(self, node: str) -> bool:
        """The node is gone: its ranges are free. True when a waiting node may now get one."""
        for cidr_set, index in self.held.pop(node, []):
            cidr_set.give_back(index)
        return bool(self.waiting)

    def next_waiting(self) -> str | None:
        return self.waiting.popleft() if self.waiting else None


CIDR_NOT_AVAILABLE = "CIDRNotAvailable"


def status_change_message(node: str, status: str) -> str:
    """nodeutil.RecordNodeStatusChange's message."""
    return f"Node {node} status is now: {status}"


def node_event(node: str, status: str, now: str, suffix: str) -> dict[str, Any]:
    """The Event RecordNodeStatusChange records: type Normal, on the Node, in `default`."""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{node}.{suffix}", "namespace": "default"},
        "involvedObject": {"apiVersion": "v1", "kind": "Node", "name": node, "uid": node},
        "reason": status,
        "message": status_change_message(node, status),
        "source": {"component": "cidrAllocator"},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
        "type": "Normal",
        "reportingComponent": "",
        "reportingInstance": "",
    }
