"""What the rules say about a move before it starts: the findings of a check (versions,
names, roles, etcd quorum, pods a drain would lose) and of a batch's plan.

The CLI and the Slack bot both show these; the bot's own interface strings live in
`bot/texts.py`. Text only, no formatting markup beyond backticks.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from joinops.requests.model import Role, Version
from joinops.wording import count_pods, named

# --- a node and its two clusters ---


def node_missing(node: str, source: str, close: Sequence[str] = ()) -> str:
    """A name not in the source; `close`: its nodes of nearly that name, closest first."""
    if close:
        return f"`{node}` is not a node of {source}. Did you mean {_either(close)}?"
    return (
        f"`{node}` is not a node of {source}. Names must match exactly what "
        f"`kubectl get nodes` shows in {source}."
    )


def node_missing_but_in_target(node: str, source: str, target: str) -> str:
    return (
        f"`{node}` is not a node of {source}, and {target} already has a node of that name: "
        f"if it is the same machine, it is in {target} already (`kubectl get node {node}` "
        f"there shows it)."
    )


def already_moved(node: str, target: str, request_id: str, joined: datetime | None) -> str:
    """The node joinops moved into `target` (by `request_id`): never to be deleted."""
    when = f" at {joined.astimezone(UTC):%Y-%m-%d %H:%M} UTC" if joined else ""
    return f"`{node}` is already in {target} (moved by {request_id}{when}): nothing to move."


def name_taken(node: str, target: str) -> str:
    return (
        f"{target} already has a node named `{node}`. The node keeps its name when it moves, "
        f"so remove the old `{node}` from {target} first (`kubectl delete node {node}`)."
    )


def _either(names: Sequence[str]) -> str:
    quoted = [f"`{n}`" for n in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


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


def control_plane_one_minor_behind(node: str, kubelet: Version, target: str, api: Version) -> str:
    return (
        f"`{node}` runs {kubelet}, one minor behind {target}'s control plane {api}. kubeadm "
        f"documents that a control-plane join needs kubeadm of the control plane's minor: "
        f"consider upgrading `{node}` to {api.minor_line} first."
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
        f"After the move, {source} no longer exists. "
        "If the join fails, the node cannot return: its cluster is gone."
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


# --- etcd quorum in the source ---


def peer_node_not_ready(node: str) -> str:
    return f"`{node}` (node NotReady)"


def peer_pod_missing(pod: str) -> str:
    return f"`kube-system/{pod}` (no such mirror pod)"


def peer_pod_not_ready(pod: str) -> str:
    return f"`kube-system/{pod}` (not Ready)"


def quorum_at_risk(node: str, source: str, problems: list[str]) -> str:
    return (
        f"Moving control plane `{node}` out of {source} needs every other control plane "
        f"healthy, and these are not: {', '.join(problems)}. etcd changes membership only "
        f"while a majority of its members is healthy, and `kubeadm reset` wipes `{node}`'s "
        f"member even when removing it failed. Bring them back to Ready first."
    )


def quorum_at_risk_now(reason: str) -> str:
    return f"Right before the node agent, the source's control planes were checked again: {reason}"


def etcd_members_at_risk(node: str, source: str, problems: list[str]) -> str:
    return (
        f"Moving control plane `{node}` out of {source} needs every other etcd member "
        f"healthy, and {source}'s etcd member list says otherwise: {'; '.join(problems)}. etcd "
        f"counts its members, not Nodes: with one of them dead, removing `{node}`'s member can "
        f"leave no majority, and then {source}'s API server stops answering."
    )


def etcd_member_without_node(member: str, command: str) -> str:
    return (
        f"member {member} runs on no control-plane Node of the cluster (a reset that could not "
        f"remove it?); if that host is gone for good, remove it on a healthy control plane: "
        f"`{command}`"
    )


def etcd_member_node_not_ready(member: str, node: str) -> str:
    return f"member {member} runs on `{node}`, which is NotReady"


def etcd_member_not_started(member: str) -> str:
    return f"member {member} was added but never started"


def etcd_member_unhealthy(member: str) -> str:
    return f"member {member} does not answer a health check"


def etcd_member_learner(member: str) -> str:
    return f"member {member} is still a learner (a join in progress): it does not vote yet"


def etcd_no_reader(source: str) -> str:
    return f"{source}'s etcd member list: no Ready control plane with a Ready etcd to read it on"


def etcd_members_unreadable(node: str, source: str, what: str) -> str:
    return (
        f"Cannot tell whether moving control plane `{node}` keeps {source}'s etcd quorum: "
        f"could not read {source}'s etcd member list ({what}). joinops moves a control plane "
        f"only when etcd's own members say it is safe. Check that the etcd pods in kube-system "
        f"are Ready and that joinops may run pods in its agent namespace there, then ask again."
    )


def etcd_two_to_one(node: str, source: str) -> str:
    return (
        f"Moving control plane `{node}` takes {source}'s etcd from two members to one, which "
        f"etcd's documentation calls unsafe: while the member is being removed, the cluster "
        f"needs both members, and if the removal or the reset goes wrong {source} has no "
        f"majority left and its API server stops. Add a third control plane to {source} first, "
        f"or ask again with --force (in Slack: the word `force`) to move it anyway; `force` "
        f"also lets the drain delete pods no controller recreates."
    )


def etcd_two_to_one_forced(node: str, source: str) -> str:
    return (
        f"Forced: moving `{node}` takes {source}'s etcd from two members to one, which etcd "
        f"calls unsafe; {source} keeps no fault tolerance afterwards."
    )


# --- pods a drain would lose ---


def uncontrolled_pods(node: str, pods: list[str]) -> str:
    return (
        f"{count_pods(len(pods))} on `{node}` without a controller: {named(pods)}. A drain "
        f"would delete them and nothing would ever recreate them. Move or delete them first, "
        f"or ask again with --force (in Slack: the word `force` in the command) to delete them."
    )


def forced_uncontrolled_pods(node: str, pods: list[str]) -> str:
    lost = count_pods(len(pods))
    return (
        f"Forced: the drain of `{node}` deletes {lost} no controller will recreate: {named(pods)}."
    )


def local_volume_pods(node: str, pods: list[str]) -> str:
    return (
        f"{count_pods(len(pods))} on `{node}` use a volume that exists only on this node: "
        f"{named(pods, quote=False)}. Deleted, they could not run on any other node. Move their "
        f"data first, or ask again with --force (in Slack: the word `force` in the command) to "
        f"delete them."
    )


def forced_local_volume_pods(node: str, pods: list[str]) -> str:
    lost = count_pods(len(pods))
    return (
        f"Forced: the drain of `{node}` deletes {lost} whose volume exists only on this node: "
        f"{named(pods, quote=False)}."
    )


def empty_dir_pods(node: str, pods: list[str]) -> str:
    return (
        f"{count_pods(len(pods))} on `{node}` use emptyDir volumes: {named(pods)}. "
        f"Their emptyDir data is lost when they are evicted."
    )


# --- batches ---


def batch_duplicate_nodes() -> str:
    return "a node is named twice: name each node once"


def batch_too_large(count: int, limit: int, source: str = "") -> str:
    """More nodes than one batch may move (`max_batch_nodes`): nothing was asked."""
    what = f"every node of {source} is {count} nodes" if source else f"that names {count} nodes"
    return (
        f"Too many nodes for one request: {what}, and one batch moves at most {limit} "
        "(`max_batch_nodes` in the configuration). Nothing was asked or started. Split it: "
        f"name the nodes in requests of at most {limit} each."
    )


def batch_node_nowhere(node: str, looked_in: list[str], close: Sequence[str] = ()) -> str:
    """A name in no cluster; `close`: nodes of nearly that name in those, closest first."""
    guess = f" Did you mean {_either(close)}?" if close else ""
    return (
        f"`{node}` is not a node of any configured cluster (looked in {', '.join(looked_in)})."
        f"{guess}"
    )


def batch_node_in_target(node: str, target: str) -> str:
    return f"`{node}` is in {target} already, and in no other cluster: nothing to move."


def batch_node_ambiguous(node: str, clusters: list[str]) -> str:
    return (
        f"`{node}` is a node of {' and '.join(clusters)}: say which one with "
        f"`from CLUSTER`, one request per source."
    )


def batch_leaves_nodes_without_control_plane(source: str) -> str:
    return (
        f"The batch moves every control plane of {source} but not all of its other nodes: "
        f"they would be left without a control plane. Add them to the batch, or leave one "
        f"control plane."
    )


# --- the host's agent and its network: Pod Security, pod ranges ---


def agent_namespace_pod_security(source: str, namespace: str, level: str) -> str:
    return (
        f"{source}'s namespace `{namespace}`, where joinops runs its node agent, has "
        f"`pod-security.kubernetes.io/enforce: {level}`; the agent is a privileged pod "
        f"(hostPID, hostNetwork, the host's / mounted), which Pod Security would reject only "
        f"when the node is already drained. Allow it there: `kubectl label namespace "
        f"{namespace} pod-security.kubernetes.io/enforce=privileged --overwrite` (in "
        f"{source}), or choose another `agent.namespace` in joinops's configuration."
    )


def pod_ranges(subnet: str, mask: int, in_use: int, total: int) -> str:
    return f"podSubnet {subnet}, a /{mask} per node: {in_use} of {total} ranges in use"


def pod_ranges_exhausted(node: str, target: str, ranges: str) -> str:
    return (
        f"{target} has no pod range left for `{node}` ({ranges}). kube-controller-manager "
        f"would give it no podCIDR (event CIDRNotAvailable) and its network would never become "
        f"Ready. Remove nodes from {target} first (a deleted node frees its range); the "
        f"podSubnet itself cannot easily be widened on a running cluster."
    )


def batch_pod_ranges_short(node: str, target: str, fit: int, asked: int, ranges: str) -> str:
    return (
        f"{target} has pod ranges left for only {fit} of this batch's {asked} nodes ({ranges}): "
        f"`{node}` would get no podCIDR and its network would never become Ready. Move at most "
        f"{fit} nodes now, or remove nodes from {target} first."
    )
