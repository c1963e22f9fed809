"""Cordon and drain a node as `kubectl drain` does, close to the floor: parallel evictions, a
watch for the pods to go.

The pods are listed and classified once, at the start, as the rules did before approval
(`joinops.rules.podsafety`): DaemonSet and mirror pods are left alone, and a pod that would be
lost for good (no controller, node-local volume) stops the drain before any eviction unless it
is forced. The drain then evicts those pods and waits for those UIDs only (`workers.drain_plan`,
kept between the slices of a long drain): a pod that appears on the cordoned node afterwards
(its controller's template names the node in `spec.nodeName`, which bypasses the cordon) is
reported once, never evicted in a loop, and does not hold the drain: kubectl's drain ignores
it, and the agent's `kubeadm reset`, next, stops it with the kubelet.

Evictions go through the eviction API so PodDisruptionBudgets are honoured; a 429 is retried
with backoff until the drain's deadline, and the other answers are read as `kubectl drain` reads
them (`eviction_answers`). Pods already terminating are waited for, not evicted again, so a
resumed drain never evicts twice. A drain that gives up says, for each pod it listed that is
still there, why: the budget that refused it (named by the 429), a grace period long past, the
API's answer (`drain_texts.pod_held`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import urllib3
from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException
from tenacity import Retrying, retry_if_exception, stop_when_event_set, wait_exponential_jitter

from joinops.clusters import watches
from joinops.clusters.kube import KubeCluster
from joinops.errors import ClusterError
from joinops.metrics import EVICTIONS, EVICTIONS_REFUSED
from joinops.requests import drain_texts
from joinops.requests.drain_texts import Held
from joinops.rules import podsafety
from workers.drain_plan import DrainPlan, is_newcomer, owner_of, tolerates_cordon
from workers.errors import PermanentError
from workers.eviction_answers import Meaning, budgets_selecting, meaning, message, refusal

PARALLEL_EVICTIONS = 24
OVERDUE_AFTER = 1.0  # seconds past deletionTimestamp (written to the second) that are overdue


@dataclass
class DrainResult:
    plan: DrainPlan  # what the drain listed; what is left of it, for the next slice
    evicted: int = 0  # eviction calls that were accepted
    rate_limited: int = 0  # 429s answered to evictions
    remaining: list[str] = field(default_factory=list)  # listed pods still there at the deadline
    held: dict[str, Held] = field(default_factory=dict)  # listed pod still there -> why

    @property
    def done(self) -> bool:
        return not self.remaining

    @property
    def blockers(self) -> dict[str, str]:
        """Listed pod still there -> why its last eviction was refused."""
        waiting = set(self.plan.waiting.values())
        return {pod: kept[0] for pod, kept in self.plan.refusals.items() if pod in waiting}


def cordon(cluster: KubeCluster, node: str, unschedulable: bool = True) -> None:
    body = {"spec": {"unschedulable": unschedulable or None}}
    cluster.call("patch", f"nodes/{node}", cluster.core.patch_node, node, body)


def is_cordoned(cluster: KubeCluster, node: str) -> bool:
    obj = cluster.call("get", f"nodes/{node}", cluster.core.read_node, node)
    return bool(obj.spec.unschedulable)


class Drainer:
    """Drains one node; `progress(gone, total)` hears how many of the listed pods are gone, now
    and then (0 first, when they are listed); `notice(text)` hears of each owner whose pods
    appear on the node afterwards, once; `stopped()` aborts. `plan`: an earlier slice's;
    `keep(plan)` hears a new one before any eviction (a drain resumed after a crash then
    carries on with it)."""

    plan: DrainPlan  # set by `run`: the one given, or the node's pods listed now
    result: DrainResult

    def __init__(
        self,
        cluster: KubeCluster,
        node: str,
        deadline: float,
        progress: Callable[[int, int], None],
        stopped: Callable[[], bool] = lambda: False,
        clock: Callable[[], float] = time.time,
        force: bool = False,
        plan: DrainPlan | None = None,
        notice: Callable[[str], None] = lambda _: None,
        keep: Callable[[DrainPlan], None] = lambda _: None,
    ) -> None:
        self.cluster, self.node, self.deadline = cluster, node, deadline
        self.progress, self.stopped, self.clock = progress, stopped, clock
        self.force, self.notice, self.keep = force, notice, keep
        self._given = plan
        self._latest: dict[str, Any] = {}  # uid -> the listed pod as last seen
        self._lock = threading.Lock()
        self._give_up = threading.Event()
        self._unanswered = 0  # evictions still waiting for the answer to their first attempt
        self._answered = threading.Event()  # every eviction had an answer to its first attempt
        self._fatal: Exception | None = None  # an answer no retry can change: stop at once

    def run(self) -> DrainResult:
        pods, resource_version = self._pods_on_node()
        plan = self.plan = self._given or self._listing(pods)
        self.result = DrainResult(plan)
        self._take(pods)
        if self._given is None:
            self.keep(plan)
            if plan.total:
                self.progress(0, plan.total)
        to_evict = [p for p in self._latest.values() if p.metadata.deletion_timestamp is None]
        self._unanswered = len(to_evict)
        if not to_evict:
            self._answered.set()
        with ThreadPoolExecutor(PARALLEL_EVICTIONS, thread_name_prefix="evict") as pool:
            for pod in to_evict:
                pool.submit(self._evict, pod)
            try:
                # A refusal of the evictions themselves (403) must end the drain at once, not
                # at its deadline: hear every eviction's first answer before watching.
                self._answered.wait(
                    max(0.0, min(self.cluster.timeout, self.deadline - self.clock()))
                )
                if self._fatal is None:
                    self._watch_until_gone(resource_version)
            finally:
                self._give_up.set()
        if self._fatal is not None:
            raise self._fatal
        self.result.remaining = sorted(plan.waiting.values())
        self.result.held = self._held()
        return self.result

    def _pods_on_node(self) -> tuple[list[Any], str]:
        return podsafety.list_node_pods(self.cluster, self.node)

    def _listing(self, pods: list[Any]) -> DrainPlan:
        """Classify, and refuse before any eviction if a pod would be lost and not forced."""
        sorted_pods = podsafety.classify(self.cluster, self.node, pods)
        if sorted_pods.blocks(self.force):
            raise PermanentError(drain_texts.drain_would_lose(self.node, sorted_pods.lost))
        return DrainPlan.listing(sorted_pods)

    def _take(self, pods: list[Any]) -> None:
        """A listing of the node: the plan's pods as they are now, the gone ones, newcomers."""
        present = {p.metadata.uid: p for p in pods}
        for uid in list(self.plan.waiting):
            if uid in present:
                self._latest[uid] = present[uid]
            else:
                self._gone(uid)
        for pod in pods:
            self._seen(pod)

    def _seen(self, pod: Any) -> None:
        plan = self.plan
        if pod.metadata.uid in plan.waiting:
            self._latest[pod.metadata.uid] = pod
        elif is_newcomer(plan, pod) and plan.note_appeared(pod):
            self.notice(
                drain_texts.recreated_on_node(
                    self.node, owner_of(pod), podsafety.pod_key(pod), tolerates_cordon(pod)
                )
            )

    def _gone(self, uid: str) -> None:
        plan = self.plan
        key = plan.waiting.pop(uid, None)
        self._latest.pop(uid, None)
        if key is not None:
            with self._lock:
                plan.refusals.pop(key, None)

    def _evict(self, pod: Any) -> None:
        name, namespace = pod.metadata.name, pod.metadata.namespace
        body = client.V1Eviction(metadata=client.V1ObjectMeta(name=name, namespace=namespace))
        retrying = Retrying(
            retry=retry_if_exception(_is_retryable),
            wait=wait_exponential_jitter(multiplier=0.1, max=2.0),
            stop=stop_when_event_set(self._give_up),
            sleep=self._sleep,  # backoff ends at once when the drain gives up
            reraise=True,
        )
        first = True
        try:
            for attempt in retrying:
                with attempt:
                    try:
                        self._evict_once(name, namespace, body)
                    finally:
                        if first:
                            first = False
                            self._first_answer()
        except ApiException as e:
            if meaning(e) is Meaning.SEVERAL_BUDGETS:
                self._stop(self._several_budgets(pod))

    def _first_answer(self) -> None:
        with self._lock:
            self._unanswered -= 1
            if self._unanswered <= 0:
                self._answered.set()

    def _sleep(self, seconds: float) -> None:
        self._give_up.wait(seconds)

    def _evict_once(self, name: str, namespace: str, body: Any) -> None:
        key = f"{namespace}/{name}"
        try:
            self.cluster.core.create_namespaced_pod_eviction(
                name, namespace, body, _request_timeout=self.cluster.timeout
            )
        except ApiException as e:
            answer = meaning(e)
            if answer is Meaning.GONE:
                return  # already gone: the watch (or a relist) sees it go
            self._refused(key, e)
            if answer is Meaning.WAIT:  # its namespace is being deleted, and the pod with it
                return
            if e.status == 429:
                EVICTIONS_REFUSED.inc()
                with self._lock:
                    self.result.rate_limited += 1
            if answer is Meaning.FORBIDDEN:  # the credentials lack the right
                self._stop(self.cluster._translate("create", f"pods/{name}/eviction", e))
            if answer is Meaning.REJECTED:
                self._stop(PermanentError(drain_texts.eviction_rejected(key, e.status, message(e))))
            raise
        EVICTIONS.inc()
        with self._lock:
            self.result.evicted += 1
            self.plan.evicted(key)

    def _refused(self, key: str, e: ApiException) -> None:
        with self._lock:
            self.plan.refused(key, refusal(e, key.split("/", 1)[0]))

    def _stop(self, error: Exception) -> None:
        """An answer no retry can change: end the whole drain with the first such error."""
        with self._lock:
            self._fatal = self._fatal or error
        self._give_up.set()

    def _several_budgets(self, pod: Any) -> Exception:
        key = podsafety.pod_key(pod)
        try:
            budgets = budgets_selecting(self.cluster, pod)
        except ClusterError:
            budgets = []
        return PermanentError(drain_texts.eviction_several_budgets(key, budgets))

    def _watch_until_gone(self, resource_version: str) -> None:
        plan = self.plan
        reported = plan.total - len(plan.waiting)
        while plan.waiting and not self._give_up.is_set() and self._fatal is None:
            left = self.deadline - self.clock()
            if left <= 0 or self.stopped():
                return
            try:
                resource_version = self._watch_once(resource_version, min(left, 5.0))
            except ApiException as e:
                if not watches.should_relist(e) and (e.status or 0) < 500:
                    raise
                # 410 Gone, 504 Too large resource version, a hiccup: list afresh, as a reflector
                resource_version = self._relist()
            except (urllib3.exceptions.HTTPError, OSError):
                resource_version = self._relist()  # the watch connection broke: list again
            gone = plan.total - len(plan.waiting)
            if gone - reported >= max(1, plan.total // 4) and plan.waiting:
                reported = gone
                self.progress(gone, plan.total)

    def _watch_once(self, resource_version: str, seconds: float) -> str:
        plan = self.plan
        stream = watch.Watch()
        for event in stream.stream(
            self.cluster.core.list_pod_for_all_namespaces,
            field_selector=f"spec.nodeName={self.node}",
            resource_version=resource_version,
            allow_watch_bookmarks=True,  # a quiet node's watch resumes from a recent version
            timeout_seconds=max(1, int(seconds)),
            _request_timeout=seconds + self.cluster.timeout,
        ):
            if event["type"] == "BOOKMARK":  # no pod: a raw dict, only where the watch has got to
                resource_version = stream.resource_version or resource_version
                continue
            pod = event["object"]
            resource_version = pod.metadata.resource_version
            if event["type"] == "DELETED":
                self._gone(pod.metadata.uid)
                if not plan.waiting or self.stopped():
                    stream.stop()
            elif event["type"] in ("ADDED", "MODIFIED"):
                self._seen(pod)
        return resource_version

    def _relist(self) -> str:
        pods, resource_version = self._pods_on_node()
        self._take(pods)
        return resource_version

    def _held(self) -> dict[str, Held]:
        """Why each listed pod still there is: terminating (within or past its grace period),
        else its eviction's last refusal, else not evicted yet."""
        plan, now = self.plan, self.clock()
        held = {}
        for uid, key in plan.waiting.items():
            pod = self._latest.get(uid)
            ends = pod.metadata.deletion_timestamp if pod is not None else None
            if ends is not None:
                left = ends.timestamp() - now
                past = left <= -OVERDUE_AFTER
                held[key] = (
                    Held("overdue", seconds=-left)
                    if past
                    else Held("terminating", seconds=max(0.0, left))
                )
            else:
                held[key] = plan.refusal(key) or Held("waiting")
        return held


def drain(cluster: KubeCluster, node: str, **kwargs: Any) -> DrainResult:
    try:
        return Drainer(cluster, node, **kwargs).run()
    except ApiException as e:
        raise cluster._translate("drain", f"pods on {node}", e) from e


def _is_retryable(error: BaseException) -> bool:
    if isinstance(error, ApiException):
        return meaning(error) is Meaning.RETRY and (
            error.status == 429 or (error.status or 0) >= 500
        )
    return isinstance(error, OSError | ClusterError | urllib3.exceptions.HTTPError)
