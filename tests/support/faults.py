"""Helpers for fault tests: held API calls, leftovers, token accounting, a private Redis."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis
from kubernetes import client
from rq.job import Job

from joinops.private_redis import PrivateRedis
from joinops.requests.events import Event
from kubesim.cluster import Cluster
from kubesim.faults import Fault

AGENT_NAMESPACE = "joinops-system"
TOKEN_PREFIX = "bootstrap-token-"


class HeldCall:
    """A one-time latency fault on one API path, with events to await instead of sleeping.

    `held` is set when the simulated API server starts holding the matching call (the client
    is then inside that call); `answered` once the server has carried the call out and
    answered it, whether or not anybody is still listening.
    """

    def __init__(
        self,
        cluster: Cluster,
        path_contains: str,
        method: str,
        seconds: float = 3.0,
        nth: int = 1,
    ) -> None:
        fault = cluster.faults.add(
            latency_seconds=seconds, path_contains=path_contains, method=method, times=1, nth=nth
        )
        assert isinstance(fault, Fault)
        self.fault = fault
        self.held = threading.Event()
        self.answered = threading.Event()
        self._thread: int | None = None
        decide, serve = cluster.faults.decide, cluster.serve

        def deciding(method: str, path: str) -> tuple[float, Any]:
            fired = self.fault.fired
            answer = decide(method, path)
            if self.fault.fired > fired:
                self._thread = threading.get_ident()
                self.held.set()
            return answer

        def serving(req: Any) -> Any:
            try:
                return serve(req)
            finally:
                if self._thread == threading.get_ident():
                    self._thread = None
                    self.answered.set()

        cluster.faults.decide = deciding  # type: ignore[method-assign]
        cluster.serve = serving  # type: ignore[method-assign]

    def wait_held(self, timeout: float = 30) -> None:
        assert self.held.wait(timeout), f"no call matching {self.fault.path_contains!r} came"

    def wait_answered(self, timeout: float = 30) -> None:
        assert self.answered.wait(timeout), f"{self.fault.path_contains!r} was never answered"


def leftovers(clusters: list[Cluster]) -> list[str]:
    """Every object joinops makes that is still there: agent pods and secrets, tokens."""
    left = []
    for cluster in clusters:
        for ns in ("kube-system", AGENT_NAMESPACE):
            for pod in cluster.pods(namespace=ns):
                if pod["metadata"]["name"].startswith("joinops-"):
                    left.append(f"{cluster.name}: pod {ns}/{pod['metadata']['name']}")
        for name in secret_names(cluster, AGENT_NAMESPACE, "joinops-"):
            left.append(f"{cluster.name}: secret {AGENT_NAMESPACE}/{name}")
        for name in secret_names(cluster, "kube-system", TOKEN_PREFIX):
            left.append(f"{cluster.name}: secret kube-system/{name}")
    return left


def secret_names(cluster: Cluster, namespace: str, prefix: str) -> list[str]:
    """Secrets whose name starts with `prefix`, read through the API as an operator would."""
    api = client.CoreV1Api(cluster.api_client())
    try:
        items = api.list_namespaced_secret(namespace).items
    finally:
        api.api_client.close()
    return sorted(s.metadata.name for s in items if s.metadata.name.startswith(prefix))


def tokens_created(cluster: Cluster) -> int:
    """How many Secrets the cluster accepted in kube-system (joinops makes only tokens there)."""
    return sum(
        1
        for r in list(cluster.requests)
        if r.verb == "create"
        and r.resource == "secrets"
        and r.namespace == "kube-system"
        and r.status == 201
    )


def tokens_deleted(cluster: Cluster) -> list[str]:
    """Names of the bootstrap-token Secrets deleted through the API, in order."""
    return [
        r.name
        for r in list(cluster.requests)
        if r.verb == "delete"
        and r.resource == "secrets"
        and r.namespace == "kube-system"
        and r.name.startswith(TOKEN_PREFIX)
        and r.status < 300
    ]


def node_ready(cluster: Cluster, name: str) -> bool:
    node = cluster.node(name)
    conditions = (node or {}).get("status", {}).get("conditions", [])
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def worker_running(
    connection: redis.Redis, job_id: str, workers: list[subprocess.Popen[bytes]]
) -> subprocess.Popen[bytes]:
    """The worker process (from `tests.support.engine.start_worker`) that took the job last."""
    name = Job.fetch(job_id, connection=connection).worker_name
    found = [w for w in workers if w.args[-1] == name]  # type: ignore[index]
    assert found, f"job {job_id} is with worker {name!r}, not one of ours"
    return found[0]


def finals(history: list[Event]) -> list[Event]:
    return [e for e in history if e.is_final]


class RedisServer(PrivateRedis):
    """A private `redis-server` with an append-only file in `directory`, fsynced on every write:
    `restart()` (SHUTDOWN, then the same port and directory) loses nothing, as an operator's
    restart or a rescheduled Redis pod with a volume would."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory, durable=True)


class Supervisor:
    """Keeps one `joinops worker` running, starting a new one whenever it exits.

    What an operator's supervisor (a Deployment, systemd with Restart=always) does; `exits`
    lists the exit status of every worker that stopped on its own.
    """

    def __init__(self, start: Callable[[int], subprocess.Popen[bytes]]) -> None:
        self._start = start
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self.exits: list[int] = []
        self.process = start(1)
        self._thread = threading.Thread(target=self._watch, name="supervisor", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while True:
            status = self.process.wait()
            with self._lock:
                if self._stopping.is_set():
                    return
                self.exits.append(status)
                self.process = self._start(len(self.exits) + 1)

    def stop(self, stop: Callable[[subprocess.Popen[bytes]], None]) -> None:
        with self._lock:
            self._stopping.set()
            process = self.process
        stop(process)
        self._thread.join(timeout=15)
