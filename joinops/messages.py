"""Every user-facing string of the shared domain, as named functions.

The CLI and the Slack bot both show these; the bot's own interface strings live in
`bot/texts.py`. Text only, no formatting markup beyond backticks.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from joinops.requests.model import Role, Version

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


def named(items: list[str], most: int = 10, quote: bool = True) -> str:
    """`a, b, c`, at most `most` of them, then `and N more`."""
    shown = ", ".join(f"`{item}`" if quote else item for item in items[:most])
    return shown + (f" and {len(items) - most} more" if len(items) > most else "")


def count_pods(count: int) -> str:
    return f"{count} pod" if count == 1 else f"{count} pods"


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


# --- the engine: step outcomes and where the node is ---


def _minutes(span: timedelta) -> str:
    total = int(span.total_seconds())
    return f"{total // 60} min" if total % 60 == 0 and total >= 60 else f"{total} s"


def rules_refuse_now(reasons: str) -> str:
    return (
        f"The rules no longer allow this move (the clusters changed since the request): {reasons}"
    )


def rules_still_allow(versions: str) -> str:
    return f"The rules still allow the move. {versions}".strip()


def token_description(request_id: str) -> str:
    return f"joinops {request_id}: joins one node, deleted once it has joined"


def material_ready(target: str, token_id: str, endpoint: str, control_plane: bool) -> str:
    certs = " Control-plane certificates uploaded (valid about 2 h)." if control_plane else ""
    return (
        f"Join material ready in {target}: bootstrap token {token_id} (the id only; the "
        f"secret is never shown), endpoint {endpoint}.{certs}"
    )


def no_ready_control_plane(target: str) -> str:
    return (
        f"{target} has no Ready control-plane node to upload the control-plane "
        f"certificates from. Bring one back, then retry."
    )


def cordoned(node: str, source: str) -> str:
    return f"`{node}` cordoned in {source}: no new pods will be scheduled on it."


def drained(
    node: str,
    pods: int,
    seconds: float,
    skipped: list[str],
    empty_dir: list[str],
    deleted_for_good: list[str] | None = None,
) -> str:
    parts = [f"`{node}` drained: {pods} pods moved off in {seconds:.1f} s"]
    if deleted_for_good:
        parts.append(f"deleted for good (forced): {named(deleted_for_good)}")
    if skipped:
        parts.append(f"{len(skipped)} DaemonSet or mirror pods left in place")
    if empty_dir:
        parts.append(
            f"emptyDir data lost for {', '.join(empty_dir[:5])}"
            + (" and more" if len(empty_dir) > 5 else "")
        )
    return "; ".join(parts) + "."


def drain_timed_out(
    node: str, timeout: timedelta, remaining: list[str], blockers: dict[str, str]
) -> str:
    shown = [f"{pod} ({blockers[pod]})" if pod in blockers else pod for pod in remaining[:10]]
    more = f" and {len(remaining) - 10} more" if len(remaining) > 10 else ""
    return (
        f"The drain of `{node}` did not finish within {_minutes(timeout)}: "
        f"{len(remaining)} pods still there: {'; '.join(shown)}{more}. "
        f"Free the disruption budgets that block them (or scale the workloads), then retry."
    )


def drain_would_lose(node: str, pods: list[str]) -> str:
    return (
        f"Stopped before evicting anything: {count_pods(len(pods))} on `{node}` would be lost "
        f"for good (no controller recreates them, or their volume exists only on this node): "
        f"{named(pods)}. They appeared after the request was checked. Move or delete them, "
        f"or ask again with --force (in Slack: the word `force`)."
    )


def eviction_namespace_terminating(namespace: str) -> str:
    return f"its namespace {namespace} is being deleted: waiting for the pod to go with it"


def eviction_rejected(pod: str, status: int | None, detail: str) -> str:
    return f"The API server rejected the eviction of `{pod}` (HTTP {status}): {detail}"


def eviction_several_budgets(pod: str, budgets: list[str]) -> str:
    which = f": {named(budgets)}" if budgets else ""
    return (
        f"`{pod}` is selected by more than one PodDisruptionBudget{which}. The eviction API "
        f"cannot evict such a pod: change the budgets so that at most one selects it, then retry."
    )


def agent_started(node: str, source: str, target: str, destroys_source: bool) -> str:
    gone = f" {source} is being destroyed with it." if destroys_source else ""
    return (
        f"Node agent started on `{node}`: it runs `kubeadm reset`, then `kubeadm join` "
        f"{target}. From here `{node}` leaves {source}; this cannot be cancelled.{gone}"
    )


def joined(node: str, target: str, seconds: float) -> str:
    return f"`{node}` is Ready in {target} ({seconds:.1f} s after the agent started)."


def never_joined(
    request: Any,
    unit: str,
    timeout: timedelta,
    target_unreachable: bool = False,
    tokens_left: tuple[str, ...] = (),
) -> str:
    """`tokens_left`: ids of the request's bootstrap tokens that could not be deleted."""
    seen = (
        f"{request.target}'s API did not answer at the end of the wait, so whether it has "
        f"registered there is not known"
        if target_unreachable
        else f"it has not registered in {request.target}"
    )
    if tokens_left:
        secrets = ", ".join(f"kube-system/bootstrap-token-{t}" for t in tokens_left)
        token = (
            f"Its bootstrap token could not be deleted ({request.target} did not answer): "
            f"delete Secret {secrets} in {request.target} once it answers (or let the "
            f"retry do it); it expires by itself."
        )
    else:
        token = "Its bootstrap token has been deleted."
    return (
        f"`{request.node}` did not become Ready in {request.target} within "
        f"{_minutes(timeout)}. Where it is: the node agent reset it, so it has left "
        f"{request.source} (NotReady there), and {seen}. "
        f"How to look: on the host, `journalctl -u {unit}` shows the join; "
        f"`kubectl get nodes` in {request.target}. {token} "
        f"Next: fix the cause, then `/join retry {request.id}` (or `joinops migrate` again) to "
        f"wait for it again, or re-join the host by hand with fresh material from "
        f"`joinops ignition --cluster {request.target}`."
    )


def leftover(what: str, cluster: str) -> str:
    return f"could not delete {what} from {cluster} (unreachable): remove it by hand"


def cleaned_up(request: Any, source_gone: bool, notes: list[str]) -> str:
    where = (
        f"{request.source} no longer exists, as expected"
        if source_gone
        else f"`{request.node}` removed from {request.source}"
    )
    tail = (" Left behind: " + "; ".join(notes) + ".") if notes else ""
    return (
        f"Cleaned up: {where}; node agent and bootstrap token deleted; "
        f"`{request.node}` labelled as {request.role} in {request.target}.{tail}"
    )


def where_before_agent(request: Any, cordon_restored: bool) -> str:
    state = "its schedulability restored" if cordon_restored else "as it was"
    return (
        f"Where it is: `{request.node}` is still in {request.source}, {state}; nothing "
        f"was left in {request.target}. Next: fix the cause, then `/join retry "
        f"{request.id}`."
    )


def failed(step: str, reason: str, where: str) -> str:
    return f"Failed at step `{step}`: {reason} {where}"


def internal_error(step: str) -> str:
    return f"an unexpected error in step `{step}` (the worker log has the details)."


def succeeded(request: Any, seconds: float) -> str:
    return (
        f"`{request.node}` moved from {request.source} to {request.target} as "
        f"{request.role} in {seconds:.0f} s."
    )


def cancelled(request: Any) -> str:
    return (
        f"Cancelled before the node agent started: `{request.node}` stays in "
        f"{request.source}, as it was."
    )


def resumed(step: str) -> str:
    return f"Resumed after a worker restart, at step `{step}`; finished steps are not run again."


def locked(node: str, holder: str) -> str:
    return (
        f"`{node}` (or a control plane this move needs) is already being moved by request "
        f"{holder}: wait for it to finish, then retry."
    )


def where_agent_unconfirmed(request: Any) -> str:
    return (
        f"Where it is: not known. The node agent's creation was sent to {request.source} but "
        f"not confirmed, so it may have started: then `{request.node}` was reset and has left "
        f"{request.source}. Look for `{request.node}` with `kubectl get nodes` in "
        f"{request.target} and in {request.source}. Its bootstrap token was deleted (if "
        f"{request.target} answered), so a join still under way fails. Next: if it is Ready in "
        f"{request.target}, `/join retry {request.id}` cleans up; if it is in neither, re-join "
        f"the host with fresh material from `joinops ignition --cluster {request.target}`."
    )


def where_after_join(request: Any) -> str:
    return (
        f"Where it is: `{request.node}` is Ready in {request.target}; only the clean-up "
        f"is left. Next: `/join retry {request.id}` finishes it."
    )


def token_not_signed(target: str) -> str:
    return (
        f"{target}'s cluster-info was not signed for the new bootstrap token: is its "
        f"controller manager (bootstrap signer) running? Nothing was done to the node."
    )


# --- batches ---


def batch_duplicate_nodes() -> str:
    return "a node is named twice: name each node once"


def batch_node_nowhere(node: str, looked_in: list[str]) -> str:
    return f"`{node}` is not a node of any configured cluster (looked in {', '.join(looked_in)})."


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


def held(node: str, blocker: str, state: str) -> str:
    return f"`{node}` was not moved: it had to wait for `{blocker}`, which {state}."


def batch_line(node: str, state: str, outcome: str) -> str:
    return f"`{node}`: {state}. {outcome}".strip()


def batch_summary(moved: int, failed: int, skipped: int, total: int, seconds: float) -> str:
    return (
        f"Batch finished in {seconds:.0f} s: {moved} of {total} moved, {failed} failed, "
        f"{skipped} not run."
    )
