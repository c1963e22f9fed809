"""What the drain says: the pods to move and how many are gone, the drained line, why a pod it
listed is still there when it gives up (each pod's own reason: the budget that refused it, a
grace period long past, the API's answer; never a budget that does not exist), the pods that
appeared on the cordoned node after it listed its pods, and the eviction answers that end it.

Used by workers.drain and the drain step (workers/node_steps.py). Text only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from joinops.wording import count_pods, minutes, named


def pods_gone(node: str, gone: int, total: int) -> str:
    if gone == 0:
        return f"{total} pods to move off {node}"
    return f"{gone} of {total} pods gone"


def drained(
    node: str,
    pods: int,
    seconds: float,
    skipped: list[str],
    empty_dir: list[str],
    deleted_for_good: list[str] | None = None,
    recreated: dict[str, list[str]] | None = None,
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
    parts += [left_for_the_reset(owner, found) for owner, found in (recreated or {}).items()]
    return "; ".join(parts) + "."


HeldBy = Literal["budget", "throttled", "failing", "namespace", "terminating", "overdue", "waiting"]


@dataclass(frozen=True)
class Held:
    """Why a pod the drain listed is still on the node (workers.drain), worded by `pod_held`."""

    why: HeldBy
    detail: str = ""  # the budget's name, the namespace, or the API's message
    note: str = ""  # what the budget's refusal says of it ("needs 2 healthy pods and has 2")
    seconds: float = 0.0  # past (overdue) or until (terminating) the end of its grace period


def pod_held(held: Held) -> str:
    why, detail = held.why, held.detail.rstrip(".")
    if why == "budget":
        name = f" `{detail}`" if detail else ""
        said = f": {held.note.rstrip('.')}" if held.note else ""
        return f"eviction refused by the disruption budget{name}{said}"
    if why == "throttled":
        return (
            f"throttled by the API server (429 Too Many Requests, no disruption budget "
            f"involved): {detail}"
        )
    if why == "failing":
        return f"its eviction kept failing: {detail}"
    if why == "namespace":
        return eviction_namespace_terminating(detail)
    if why == "overdue":
        return f"still terminating, {held.seconds:.0f} s past its grace period"
    if why == "terminating":
        return f"terminating, its grace period ends in {held.seconds:.0f} s"
    return "not evicted yet"


def _owner(owner: str) -> str:
    """``Kind namespace/name`` as ``Kind `namespace/name` ``."""
    kind, _, name = owner.partition(" ")
    return f"{kind} `{name}`"


def recreated_on_node(node: str, owner: str, pod: str, tolerates_cordon: bool) -> str:
    """A pod that appeared on the cordoned node after the drain listed its pods (`owner`:
    ``Kind namespace/name`` of its controller, "" for none): not evicted; the reset stops it."""
    if tolerates_cordon:
        how = f"scheduled on `{node}` despite the cordon (it tolerates the unschedulable taint)"
    elif owner:
        how = f"re-created on `{node}` by its template's nodeName, which bypasses the cordon"
    else:
        how = f"created on `{node}` after the drain began, with no controller"
    by = f" by {_owner(owner)}" if owner else ""
    return (
        f"`{pod}`{by}: {how}. Not evicted (kubectl drain waits only for the pods it listed): "
        f"it will be stopped by the reset."
    )


def left_for_the_reset(owner: str, pods: list[str]) -> str:
    """The pods that appeared on the node after the drain listed its pods, by their owner."""
    how = (
        f"re-created on the node by {_owner(owner)}" if owner else "created on the node afterwards"
    )
    return f"{count_pods(len(pods))} {how} left for the reset"


def drain_timed_out(
    node: str,
    timeout: timedelta,
    held: dict[str, Held],
    recreated: dict[str, list[str]] | None = None,
) -> str:
    """`held`: each listed pod still there -> why."""
    pods = sorted(held)
    shown = [f"{pod} ({pod_held(held[pod])})" for pod in pods[:10]]
    more = f" and {len(pods) - 10} more" if len(pods) > 10 else ""
    left = [left_for_the_reset(owner, found) for owner, found in (recreated or {}).items()]
    besides = f" Not waited for: {'; '.join(left)}." if left else ""
    return (
        f"The drain of `{node}` did not finish within {minutes(timeout)}: "
        f"{count_pods(len(pods))} it listed still there: {'; '.join(shown)}{more}.{besides} "
        f"{_drain_advice({h.why for h in held.values()})}"
    )


def _drain_advice(whys: set[HeldBy]) -> str:
    steps = []
    if "budget" in whys:
        steps.append("free the disruption budgets named (or scale their workloads)")
    if "overdue" in whys:
        steps.append(
            "find what keeps the pods past their grace period (a finalizer, or a kubelet that "
            "does not confirm they stopped)"
        )
    if whys & {"throttled", "failing"}:
        steps.append("check the API server's health")
    if not steps:
        return "Retry when they are gone, or with a longer `timeouts.drain`."
    text = "; ".join(steps)
    return f"{text[0].upper()}{text[1:]}, then retry."


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
