"""Cordon and drain a node, close to the floor: parallel evictions, a watch for the pods to go.

Evictions go through the eviction API so PodDisruptionBudgets are honoured; a 429 is retried
with backoff until the drain's deadline. Pods already terminating are waited for, not evicted
again, so a resumed drain never evicts twice. DaemonSet and mirror pods are left alone.
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

from joinops import watches
from joinops.errors import ClusterError
from joinops.kube import KubeCluster
from joinops.metrics import EVICTIONS, EVICTIONS_REFUSED

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
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
    """Drains one node; `progress(text)` receives a line now and then; `stopped()` aborts."""

    def __init__(
        self,
        cluster: KubeCluster,
        node: str,
        deadline: float,
        progress: Callable[[str], None],
        stopped: Callable[[], bool] = lambda: False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.cluster, self.node, self.deadline = cluster, node, deadline
        self.progress, self.stopped, self.clock = progress, stopped, clock
        self.result = DrainResult()
        self._remaining: dict[str, str] = {}  # uid -> ns/name
        self._lock = threading.Lock()
        self._give_up = threading.Event()
        self._unanswered = 0  # evictions still waiting for the answer to their first attempt
        self._answered = threading.Event()  # every eviction had an answer to its first attempt
        self._forbidden: ClusterError | None = None  # a 401/403: retrying cannot help

    def run(self) -> DrainResult:
        pods, resource_version = self._pods_on_node()
        to_evict = self._select(pods)
        total = len(self._remaining)
        if total:
            self.progress(f"{total} pods to move off {self.node}")
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
                if self._forbidden is None:
                    self._watch_until_gone(resource_version, total)
            finally:
                self._give_up.set()
        if self._forbidden is not None:
            raise self._forbidden
        self.result.remaining = sorted(self._remaining.values())
        return self.result

    def _pods_on_node(self) -> tuple[list[Any], str]:
        listing = self.cluster.call(
            "list",
            "pods",
            self.cluster.core.list_pod_for_all_namespaces,
            field_selector=f"spec.nodeName={self.node}",
        )
        return list(listing.items), str(listing.metadata.resource_version)

    def _select(self, pods: list[Any]) -> list[Any]:
        to_evict = []
        for pod in pods:
            key = f"{pod.metadata.namespace}/{pod.metadata.name}"
            if _is_daemonset_pod(pod) or MIRROR_ANNOTATION in (pod.metadata.annotations or {}):
                self.result.skipped.append(key)
                continue
            self._remaining[pod.metadata.uid] = key
            if any(v.empty_dir is not None for v in pod.spec.volumes or []):
                self.result.empty_dir.append(key)
            if pod.metadata.deletion_timestamp is not None:
                self.result.already_terminating += 1
            else:
                to_evict.append(pod)
        return to_evict

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

    def _first_answer(self) -> None:
        with self._lock:
            self._unanswered -= 1
            if self._unanswered <= 0:
                self._answered.set()

    def _sleep(self, seconds: float) -> None:
        self._give_up.wait(seconds)

    def _evict_once(self, name: str, namespace: str, body: Any) -> None:
        try:
            self.cluster.core.create_namespaced_pod_eviction(
                name, namespace, body, _request_timeout=self.cluster.timeout
            )
        except ApiException as e:
            if e.status == 404:
                return  # already gone
            if e.status == 429:
                EVICTIONS_REFUSED.inc()
                with self._lock:
                    self.result.rate_limited += 1
                self._note_blocker(f"{namespace}/{name}", _explain(e))
            if e.status in (401, 403):
                with self._lock:  # the credentials lack the right: stop the whole drain
                    self._forbidden = self._forbidden or self.cluster._translate(
                        "create", f"pods/{name}/eviction", e
                    )
                self._give_up.set()
            raise
        EVICTIONS.inc()
        with self._lock:
            self.result.evicted += 1
            self.result.blockers.pop(f"{namespace}/{name}", None)

    def _note_blocker(self, key: str, why: str) -> None:
        with self._lock:
            self.result.blockers[key] = why

    def _watch_until_gone(self, resource_version: str, total: int) -> None:
        reported = 0
        while self._remaining and not self._give_up.is_set() and self._forbidden is None:
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
                self.progress(f"{gone} of {total} pods gone")

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


def _is_daemonset_pod(pod: Any) -> bool:
    return any(ref.kind == "DaemonSet" for ref in pod.metadata.owner_references or [])


def _is_retryable(error: BaseException) -> bool:
    if isinstance(error, ApiException):
        return error.status == 429 or (error.status or 0) >= 500
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
