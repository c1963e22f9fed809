"""Cordon and drain a node, close to the floor: parallel evictions, a watch for the pods to go.

Evictions go through the eviction API so PodDisruptionBudgets are honoured; a 429 is retried
with backoff until the drain's deadline, and the other answers are read as `kubectl drain` reads
them (`eviction_answers`). Pods already terminating are waited for, not evicted again, so a
resumed drain never evicts twice. The pods are classified as the rules did before approval
(`joinops.rules.podsafety`): DaemonSet and mirror pods are left alone, and a pod that would be
lost for good (no controller, node-local volume) stops the drain before any eviction unless it is
forced.
"""

from __future__ import annotations

import json
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
from joinops.requests import step_texts
from joinops.rules import podsafety
from workers.errors import PermanentError
from workers.eviction_answers import Meaning, budgets_selecting, meaning

PARALLEL_EVICTIONS = 24


@dataclass
class DrainResult:
    evicted: int = 0  # eviction calls that were accepted
    already_terminating: int = 0
    skipped: list[str] = field(default_factory=list)  # DaemonSet and mirror pods
    empty_dir: list[str] = field(default_factory=list)  # pods whose emptyDir data was lost
    remaining: list[str] = field(default_factory=list)  # pods still there at the deadline
    blockers: dict[str, str] = field(default_factory=dict)  # pod -> why its eviction failed
    rate_limited: int = 0  # 429s answered to evictions
    deleted_for_good: list[str] = field(default_factory=list)  # forced: no controller recreates

    @property
    def done(self) -> bool:
        return not self.remaining


def cordon(cluster: KubeCluster, node: str, unschedulable: bool = True) -> None:
    body = {"spec": {"unschedulable": unschedulable or None}}
    cluster.call("patch", f"nodes/{node}", cluster.core.patch_node, node, body)


def is_cordoned(cluster: KubeCluster, node: str) -> bool:
    obj = cluster.call("get", f"nodes/{node}", cluster.core.read_node, node)
    return bool(obj.spec.unschedulable)


class Drainer:
    """Drains one node; `progress(gone, total)` hears how many of the pods to move are gone, now
    and then (0 first, once the pods to move are known); `stopped()` aborts."""

    def __init__(
        self,
        cluster: KubeCluster,
        node: str,
        deadline: float,
        progress: Callable[[int, int], None],
        stopped: Callable[[], bool] = lambda: False,
        clock: Callable[[], float] = time.time,
        force: bool = False,
    ) -> None:
        self.cluster, self.node, self.deadline = cluster, node, deadline
        self.progress, self.stopped, self.clock = progress, stopped, clock
        self.force = force
        self.result = DrainResult()
        self._remaining: dict[str, str] = {}  # uid -> ns/name
        self._lock = threading.Lock()
        self._give_up = threading.Event()
        self._unanswered = 0  # evictions still waiting for the answer to their first attempt
        self._answered = threading.Event()  # every eviction had an answer to its first attempt
        self._fatal: Exception | None = None  # an answer no retry can change: stop at once

    def run(self) -> DrainResult:
        pods, resource_version = self._pods_on_node()
        to_evict = self._select(podsafety.classify(self.cluster, self.node, pods))
        total = len(self._remaining)
        if total:
            self.progress(0, total)
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
                    self._watch_until_gone(resource_version, total)
            finally:
                self._give_up.set()
        if self._fatal is not None:
            raise self._fatal
        self.result.remaining = sorted(self._remaining.values())
        return self.result

    def _pods_on_node(self) -> tuple[list[Any], str]:
        return podsafety.list_node_pods(self.cluster, self.node)

    def _select(self, pods: podsafety.NodePods) -> list[Any]:
        """Refuse before any eviction if a pod would be lost and the drain is not forced."""
        if pods.blocks(self.force):
            raise PermanentError(step_texts.drain_would_lose(self.node, pods.lost))
        self.result.skipped = list(pods.left)
        self.result.empty_dir = list(pods.empty_dir)
        self.result.deleted_for_good = pods.lost
        self.result.already_terminating = len(pods.terminating)
        for pod in [*pods.terminating, *pods.evict]:
            self._remaining[pod.metadata.uid] = podsafety.pod_key(pod)
        return list(pods.evict)

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
            if e.status != 429:
                self._note_blocker(f"{namespace}/{name}", _explain(e))
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
            if answer is Meaning.WAIT:  # its namespace is being deleted, and the pod with it
                self._note_blocker(key, step_texts.eviction_namespace_terminating(namespace))
                return
            if e.status == 429:
                EVICTIONS_REFUSED.inc()
                with self._lock:
                    self.result.rate_limited += 1
                self._note_blocker(key, _explain(e))
            if answer is Meaning.FORBIDDEN:  # the credentials lack the right
                self._stop(self.cluster._translate("create", f"pods/{name}/eviction", e))
            if answer is Meaning.REJECTED:
                self._stop(PermanentError(step_texts.eviction_rejected(key, e.status, _explain(e))))
            raise
        EVICTIONS.inc()
        with self._lock:
            self.result.evicted += 1
            self.result.blockers.pop(f"{namespace}/{name}", None)

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
        return PermanentError(step_texts.eviction_several_budgets(key, budgets))

    def _note_blocker(self, key: str, why: str) -> None:
        with self._lock:
            self.result.blockers[key] = why

    def _watch_until_gone(self, resource_version: str, total: int) -> None:
        reported = 0
        while self._remaining and not self._give_up.is_set() and self._fatal is None:
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
            gone = total - len(self._remaining)
            if total and gone - reported >= max(1, total // 4) and self._remaining:
                reported = gone
                self.progress(gone, total)

    def _watch_once(self, resource_version: str, seconds: float) -> str:
        stream = watch.Watch()
        for event in stream.stream(
            self.cluster.core.list_pod_for_all_namespaces,
            field_selector=f"spec.nodeName={self.node}",
            resource_version=resource_version,
            timeout_seconds=max(1, int(seconds)),
            _request_timeout=seconds + self.cluster.timeout,
        ):
            pod = event["object"]
            resource_version = pod.metadata.resource_version
            if event["type"] == "DELETED":
                self._remaining.pop(pod.metadata.uid, None)
                if not self._remaining or self.stopped():
                    stream.stop()
        return resource_version

    def _relist(self) -> str:
        pods, resource_version = self._pods_on_node()
        present = {p.metadata.uid for p in pods}
        for uid in list(self._remaining):
            if uid not in present:
                self._remaining.pop(uid)
        return resource_version


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


def _explain(e: ApiException) -> str:
    """The eviction refusal in words, naming the disruption budget when there is one."""
    try:
        body = json.loads(e.body or "{}")
    except ValueError:
        return f"HTTP {e.status}"
    causes = (body.get("details") or {}).get("causes") or []
    budgets = [c.get("message", "") for c in causes if c.get("reason") == "DisruptionBudget"]
    return "; ".join(budgets) or str(body.get("message") or f"HTTP {e.status}")[:300]
