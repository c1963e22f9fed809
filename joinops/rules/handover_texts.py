"""What the rules say about a control plane's move beyond quorum: the target's etcd size
(etcd's FAQ) and what still points at the moving node in its source (its controlPlaneEndpoint)."""

from __future__ import annotations

MAX_ETCD_MEMBERS = 7


def etcd_past_seven(target: str, members: int) -> str:
    return (
        f"{target} will have {members} etcd members; etcd recommends at most "
        f"{MAX_ETCD_MEMBERS}: every write waits for a majority of them, so more members make "
        f"writes slower for little more fault tolerance. Consider joining it as a worker "
        f"(`as worker`)."
    )


def batch_joins_as_worker(node: str, target: str, members: int, planes: int) -> str:
    return (
        f"`{node}` joins {target} as a worker: {target} has {members} etcd "
        f"{'member' if members == 1 else 'members'}, and {planes} more control "
        f"{'plane keeps' if planes == 1 else 'planes keep'} it odd and at most "
        f"{MAX_ETCD_MEMBERS} (etcd's recommendation)."
    )


def source_endpoint(source: str, endpoint: str) -> str:
    return f"{source}'s controlPlaneEndpoint is `{endpoint}`."


def endpoint_is_node(node: str, source: str, endpoint: str, address: str) -> str:
    return (
        f"{source}'s controlPlaneEndpoint `{endpoint}` is `{node}`'s own address {address}: "
        f"every kubelet, kubeconfig and join of {source} that uses it reaches `{node}`, which "
        f"after the move answers as the target's API server (or not at all). Point the "
        f"endpoint (DNS or load balancer) at another control plane of {source} first."
    )


def endpoint_may_be_vip(node: str, source: str, endpoint: str, address: str) -> str:
    return (
        f"{source}'s controlPlaneEndpoint `{endpoint}` ({address}) is no node's address: a "
        f"load balancer or a virtual IP that `{node}` may hold. Take `{node}` out of the load "
        f"balancer's backends; a virtual IP moves on only where keepalived runs on another "
        f"control plane (on hosts joinops provisioned with a virtual IP, the node agent stops "
        f"keepalived and the local nginx on `{node}` between the reset and the join)."
    )


def endpoint_unresolved(source: str, endpoint: str) -> str:
    return (
        f"{source}'s controlPlaneEndpoint `{endpoint}` does not resolve from here: check that "
        f"it does not lead to the moving node."
    )


def all_takes_etcd_two_to_one(source: str, planes: int) -> str:
    return (
        f"Moving all {planes} control planes of {source} takes its etcd from two members to one "
        "on the way, which etcd's documentation calls unsafe (if that removal or reset goes "
        f"wrong, {source} has no majority left before its last control plane moves). Ask again "
        "with --force (in Slack: the word `force`) to accept it; `force` also lets the drains "
        "delete pods no controller recreates."
    )


def all_takes_etcd_two_to_one_forced(source: str, planes: int) -> str:
    return (
        f"Forced: moving all {planes} control planes of {source} takes its etcd from two "
        "members to one on the way."
    )
