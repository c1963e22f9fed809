"""Is a pod range left in the target for a joining node?

In a kubeadm cluster with `networking.podSubnet`, kube-controller-manager runs with
`--allocate-node-cidrs=true` and gives each Node a `spec.podCIDR` of `--node-cidr-mask-size`
bits (24 for IPv4 unless set). When the range is used up a new node gets none (event
`CIDRNotAvailable`) and its network never becomes Ready.

The allocator hands a range to every node while any is free, and retries nodes that got none, so
the ranges in use are min(nodes, ranges): counted from one page of one node (`limit=1`, its
`remainingItemCount`), never a node list — a check costs the same whatever the cluster's size.
That one node also tells whether the cluster gives out ranges at all (it holds a podCIDR), as
does the controller manager's `--allocate-node-cidrs` when its mirror pod is there. Only the
IPv4 range of a dual-stack podSubnet is counted; an IPv6-only one is not checked.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass

from joinops.clusters.kube import KubeCluster
from joinops.requests.model import ClusterFacts
from joinops.rules import texts as rule_texts
from joinops.rules.findings import Finding, Severity

DEFAULT_IPV4_MASK = 24
MASK_FLAGS = ("node-cidr-mask-size-ipv4", "node-cidr-mask-size")


@dataclass(frozen=True)
class PodRanges:
    """A target's IPv4 pod ranges: its podSubnet cut at `mask` bits, and how many are in use."""

    subnet: str
    mask: int
    total: int
    in_use: int

    @property
    def free(self) -> int:
        return max(0, self.total - self.in_use)

    def describe(self) -> str:
        return rule_texts.pod_ranges(self.subnet, self.mask, self.in_use, self.total)

    def findings(self, node: str, target: str) -> list[Finding]:
        if self.free > 0:
            return []
        text = rule_texts.pod_ranges_exhausted(node, target, self.describe())
        return [Finding(Severity.REFUSAL, "pod-range-exhausted", text)]


def ipv4_subnet(pod_subnet: str) -> ipaddress.IPv4Network | None:
    """The IPv4 network of a (possibly dual-stack, comma-separated) podSubnet."""
    for part in pod_subnet.split(","):
        try:
            network = ipaddress.ip_network(part.strip(), strict=False)
        except ValueError:
            continue
        if isinstance(network, ipaddress.IPv4Network):
            return network
    return None


def mask_size(flags: Mapping[str, str], extra_args: Mapping[str, str]) -> int:
    """The IPv4 mask: the controller manager's flag, else kubeadm's extraArgs, else 24."""
    for source in (flags, extra_args):
        for flag in MASK_FLAGS:
            value = source.get(flag, "")
            if value.isdigit():
                return int(value)
    return DEFAULT_IPV4_MASK


def controller_manager_flags(target: KubeCluster) -> dict[str, str] | None:
    """kube-controller-manager's `--flag=value`s from its mirror pod; None when there is none.
    One call."""
    pods = target.call(
        "list",
        "pods (kube-system, component=kube-controller-manager)",
        target.core.list_namespaced_pod,
        "kube-system",
        label_selector="component=kube-controller-manager",
        limit=1,
    )
    for pod in pods.items:
        flags: dict[str, str] = {}
        for container in pod.spec.containers if pod.spec else []:
            for word in (container.command or []) + (container.args or []):
                flag, _, value = str(word).partition("=")
                if flag.startswith("--"):
                    flags[flag[2:]] = value
        return flags
    return None


def node_count(target: KubeCluster) -> tuple[int | None, bool]:
    """How many nodes, and does the first hold a podCIDR: one page of one node. The count is
    None when the server does not say (no remainingItemCount)."""
    page = target.call("list", "nodes", target.core.list_node, limit=1)
    first_holds = any(bool(n.spec and n.spec.pod_cidr) for n in page.items)
    meta = page.metadata
    remaining = meta.remaining_item_count if meta else None
    if remaining is None and meta and meta._continue:
        return None, first_holds
    return len(page.items) + int(remaining or 0), first_holds


def read(target: KubeCluster, facts: ClusterFacts) -> PodRanges | None:
    """The target's pod ranges, or None when it gives none out (no IPv4 podSubnet, no
    allocation) or cannot say. Two calls, and none without an IPv4 podSubnet."""
    subnet = ipv4_subnet(facts.pod_subnet)
    if subnet is None:
        return None
    flags = controller_manager_flags(target)
    mask = mask_size(flags or {}, dict(facts.controller_manager_args))
    if mask < subnet.prefixlen or mask > 32:
        return None
    nodes, first_holds = node_count(target)
    allocates = first_holds or (flags or {}).get("allocate-node-cidrs") == "true"
    if nodes is None or not allocates:
        return None
    total = 1 << (mask - subnet.prefixlen)
    return PodRanges(str(subnet), mask, total, min(nodes, total))


def shortfall(nodes: list[str], target: str, ranges: PodRanges | None) -> dict[str, Finding]:
    """A batch's nodes (those allowed so far, in plan order) beyond the free ranges: refused."""
    if ranges is None or len(nodes) <= ranges.free:
        return {}
    describe, fit = ranges.describe(), ranges.free
    return {
        node: Finding(
            Severity.REFUSAL,
            "pod-range-exhausted",
            rule_texts.batch_pod_ranges_short(node, target, fit, len(nodes), describe),
        )
        for node in nodes[fit:]
    }
