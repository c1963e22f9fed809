"""What a drain evicts and waits for, chosen once, as `kubectl drain` chooses it.

kubectl lists the node's pods, filters them (DaemonSet and mirror pods stay), evicts those and
waits for those by UID: a pod gone, or replaced by one of the same name and another UID, counts
as deleted (`waitForDelete`). A pod that appears on the node afterwards is none of its business.
The plan does the same across the slices of a long drain (workers/waits.py): the first slice
lists and classifies the pods (`joinops.rules.podsafety`) and records their UIDs; every later
slice evicts and waits for those UIDs only, so a drain never evicts the same pod's replacements
over and over.

A pod can appear on a cordoned node: its controller's template sets `spec.nodeName` (the
scheduler, and with it the cordon, is bypassed: the kubelet runs what names its node), or it
tolerates the unschedulable taint. Such a pod is reported once per controller, not evicted
(its controller would only put it back) and does not hold the drain: kubectl's drain ends
without it, and here the agent's `kubeadm reset`, right after, stops the kubelet and every pod
of the node with it.

The plan is kept in the step's record between slices (`to_memory`/`from_memory`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, cast

from joinops.requests.drain_texts import Held, HeldBy
from joinops.rules import podsafety

UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
NAMES_KEPT = 100  # pods named per owner among those that appeared: the count is what matters


@dataclass
class DrainPlan:
    waiting: dict[str, str]  # uid -> namespace/name: listed at the start, not gone yet
    total: int  # how many were listed
    skipped: list[str] = field(default_factory=list)  # DaemonSet and mirror pods
    empty_dir: list[str] = field(default_factory=list)  # pods whose emptyDir data is lost
    deleted_for_good: list[str] = field(default_factory=list)  # forced: nothing recreates
    refusals: dict[str, list[str]] = field(default_factory=dict)  # pod -> [why, detail, note]
    appeared: dict[str, list[str]] = field(default_factory=dict)  # owner_of -> their pods

    @classmethod
    def listing(cls, pods: podsafety.NodePods) -> DrainPlan:
        chosen = [*pods.terminating, *pods.evict]
        return cls(
            waiting={p.metadata.uid: podsafety.pod_key(p) for p in chosen},
            total=len(chosen),
            skipped=list(pods.left),
            empty_dir=list(pods.empty_dir),
            deleted_for_good=pods.lost,
        )

    def to_memory(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_memory(cls, data: Any) -> DrainPlan | None:
        if not isinstance(data, dict):
            return None
        try:
            return cls(**data)
        except TypeError:
            return None  # written by another version: the drain lists its pods afresh

    def refused(self, pod: str, held: Held) -> None:
        self.refusals[pod] = [held.why, held.detail, held.note]

    def refusal(self, pod: str) -> Held | None:
        """The last refusal of the pod's eviction, if its last answer was one."""
        kept = self.refusals.get(pod)
        if not kept or len(kept) != 3:
            return None
        why, detail, note = kept
        return Held(cast(HeldBy, why), detail, note)

    def evicted(self, pod: str) -> None:
        self.refusals.pop(pod, None)

    def note_appeared(self, pod: Any) -> bool:
        """Record a pod that appeared on the node; True when it is its owner's first."""
        owner, key = owner_of(pod), podsafety.pod_key(pod)
        seen = self.appeared.get(owner)
        if seen is None:
            self.appeared[owner] = [key]
            return True
        if key not in seen and len(seen) < NAMES_KEPT:
            seen.append(key)
        return False


def is_newcomer(plan: DrainPlan, pod: Any) -> bool:
    """A pod on the node that the plan did not list and that a drain would have evicted."""
    return pod.metadata.uid not in plan.waiting and not podsafety.left_alone(pod)


def owner_of(pod: Any) -> str:
    """``Kind namespace/name`` of the pod's controller, "" when it has none."""
    ref = next((r for r in pod.metadata.owner_references or [] if r.controller), None)
    return f"{ref.kind} {pod.metadata.namespace}/{ref.name}" if ref is not None else ""


def tolerates_cordon(pod: Any) -> bool:
    """Could the scheduler have placed it on a cordoned node (as it does DaemonSet pods)?"""
    for toleration in pod.spec.tolerations or []:
        if toleration.effect not in (None, "", "NoSchedule"):
            continue
        if toleration.operator == "Exists" and toleration.key in (None, "", UNSCHEDULABLE_TAINT):
            return True
        if toleration.key == UNSCHEDULABLE_TAINT:
            return True
    return False
