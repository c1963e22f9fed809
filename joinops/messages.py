"""Every user-facing string of the shared domain, as named functions.

The CLI and the Slack bot both show these; the bot's own interface strings live in
`bot/texts.py`. Text only, no formatting markup beyond backticks.
"""

from __future__ import annotations

from joinops.model import Role, Version

# --- rule findings ---


def node_missing(node: str, source: str) -> str:
    return (
        f"`{node}` is not a node of {source}. Names must match exactly what "
        f"`kubectl get nodes` shows in {source}."
    )


def name_taken(node: str, target: str) -> str:
    return (
        f"{target} already has a node named `{node}`. The node keeps its name when it moves, "
        f"so remove the old `{node}` from {target} first (`kubectl delete node {node}`)."
    )


def allowed_kubelets(target: Version) -> str:
    below = Version(target.major, target.minor - 1, 0)
    return f"{target.minor_line}.x or {below.minor_line}.x"


def version_ok(node: str, kubelet: Version, target: str, api: Version) -> str:
    return (
        f"Versions: kubelet {kubelet} on `{node}` vs {target}'s API server {api} "
        f"(allowed kubelets: {allowed_kubelets(api)})."
    )


def version_newer(node: str, kubelet: Version, target: str, api: Version) -> str:
    return (
        f"Kubelet {kubelet} on `{node}` is newer than {target}'s API server {api}; a kubelet "
        f"may never be newer than its API server. Allowed: {allowed_kubelets(api)}. "
        f"Upgrade {target} first, or pick another target."
    )


def version_too_old(node: str, kubelet: Version, target: str, api: Version) -> str:
    behind = api.minor - kubelet.minor
    return (
        f"Kubelet {kubelet} on `{node}` is {behind} minor releases behind {target}'s API "
        f"server {api}. Allowed: {allowed_kubelets(api)}. Upgrade `{node}` first."
    )


def version_other_major(node: str, kubelet: Version, target: str, api: Version) -> str:
    return (
        f"Kubelet {kubelet} on `{node}` and {target}'s API server {api} differ in major "
        f"version. Allowed: {allowed_kubelets(api)}."
    )


def last_control_plane_with_workers(node: str, source: str) -> str:
    return (
        f"`{node}` is the last control plane of {source}, and {source} still has other nodes. "
        f"Moving it would destroy {source} under them: move or remove {source}'s other nodes "
        f"first, then move `{node}`."
    )


def destroys_source(node: str, source: str) -> str:
    return (
        f"This destroys {source}: `{node}` is its only node and its only control plane. "
        f"After the move, {source} no longer exists."
    )


def needs_control_plane_endpoint(target: str) -> str:
    return (
        f"{target} has no `controlPlaneEndpoint` in its kubeadm configuration, and kubeadm can "
        f"only add control planes to a cluster that has one. Join as a worker instead, or "
        f"give {target} a shared endpoint first."
    )


def etcd_even_after_removal(node: str, source: str, remaining: int) -> str:
    return (
        f"Removing control plane `{node}` leaves {source} with {remaining} etcd members, an "
        f"even number: it tolerates no more failures than {remaining - 1} would."
    )


def etcd_even_after_join(target: str, members: int) -> str:
    if members == 2:
        return (
            f"{target} goes from one etcd member to two: until a third joins, losing either "
            f"member stops {target}'s control plane."
        )
    return f"{target} will have {members} etcd members, an even number."


def mismatch(what: str, node: str, value: str, target: str, theirs: str) -> str:
    return f"`{node}` has {what} {value}, but {target}'s control planes have {theirs}."


def node_not_ready(node: str, source: str) -> str:
    return f"`{node}` is NotReady in {source}: its pods may not drain and the agent may not start."


def node_cordoned(node: str, source: str) -> str:
    return f"`{node}` is already cordoned in {source}; if the move fails it stays cordoned."


def role_change(node: str, was: Role, role: Role, target: str) -> str:
    return f"`{node}` is a {was} in its source and joins {target} as a {role}."


def cluster_unusable(cluster: str, detail: str) -> str:
    return f"Cannot check {cluster}: {detail}"


# --- plan steps ---


STEP_TITLES = {
    "check": "Re-check the rules; take the node and control-plane locks",
    "join-material": "Prepare join material in {target} (bootstrap token{cert})",
    "cordon": "Cordon `{node}` in {source}",
    "drain": "Drain `{node}`: evict its pods (disruption budgets honoured), wait until gone",
    "agent": "Start the node agent on `{node}`: kubeadm reset, then kubeadm join {target}",
    "wait-joined": "Wait for `{node}` to be Ready in {target}",
    "cleanup": "Clean up: delete `{node}` from {source}, the agent and the token; label it",
}
