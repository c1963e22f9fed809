"""Helpers for fault tests: held API calls, leftovers, token accounting, a private Redis."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis
from kubernetes import client
from redis.backoff import NoBackoff
from redis.retry import Retry
from rq.job import Job

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
        self, cluster: Cluster, path_contains: str, method: str, seconds: float = 3.0
    ) -> None:
        fault = cluster.faults.add(
            latency_seconds=seconds, path_contains=path_contains, method=method, times=1
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """A private `redis-server` with an append-only file in `directory`, fsynced on every write.

    `restart()` shuts it down (SHUTDOWN, which flushes the AOF) and starts it again on the same
    port and directory, as an operator's restart or a rescheduled Redis pod would.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None
        self.binary = shutil.which("redis-server") or "redis-server"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.directory),
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
                "--daemonize",
                "no",
            ],
            stdout=(self.directory / "redis.log").open("ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._until(lambda: self._answers(), "redis-server did not start")

    def shutdown(self) -> None:
        assert self.process is not None
        client = self._client(socket_timeout=5)
        try:
            client.shutdown()
        except redis.ConnectionError:
            pass  # it closes the connection as it goes
        finally:
            client.close()
        self.process.wait(timeout=10)

    def restart(self, down_seconds: float = 0.0) -> None:
        """Shut down, stay down `down_seconds` (the outage is the fault), start again."""
        self.shutdown()
        if down_seconds:
            time.sleep(down_seconds)
        self.start()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait(timeout=10)

    def _answers(self) -> bool:
        client = self._client(socket_timeout=1)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    def _client(self, socket_timeout: float) -> redis.Redis:
        """A client that tries once: redis-py's default retries would hide how long it took."""
        return redis.Redis(
            port=self.port, socket_timeout=socket_timeout, retry=Retry(NoBackoff(), 0)
        )

    def _until(self, predicate: Callable[[], bool], message: str, timeout: float = 10) -> None:
        # redis-server announces readiness only in its log: poll the port, briefly
        deadline = time.monotonic() + timeout
        while not predicate():
            assert self.process is not None and self.process.poll() is None, message
            assert time.monotonic() < deadline, message
            time.sleep(0.02)


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
