"""What the parts of the simulation see of a cluster and of the world.

The API, the controllers and the node-side behaviours are handed the cluster and the world
they act on (``Cluster`` and ``World`` pass themselves); they know them only by these
protocols, so none of them imports the modules that compose them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

from kubesim.clock import Clock
from kubesim.entries import Change, Entry
from kubesim.etcd import EtcdMembers
from kubesim.hosts import Host
from kubesim.http_messages import Response
from kubesim.rbac import Rbac
from kubesim.resources import Resource
from kubesim.routes import Route
from kubesim.store import Store


class PodRunner(Protocol):
    """The kubelet, as the host agent and the cluster drive it."""

    def pod_changed(self, cluster: SimCluster, entry: Entry) -> None: ...

    def set_running(self, cluster: SimCluster, host: Host, namespace: str, name: str) -> None: ...

    def set_finished(
        self,
        cluster: SimCluster,
        host: Host,
        namespace: str,
        name: str,
        ok: bool,
        message: str = "",
    ) -> None: ...


class SpecialPods(Protocol):
    """The host agent: upload-certs and node-agent pods the kubelet hands over."""

    def run_special(self, cluster: SimCluster, host: Host, entry: Entry) -> bool: ...


class BudgetSync(Protocol):
    """The disruption controller, as a cluster adding a synced budget calls it."""

    def sync(self, cluster: SimCluster, namespace: str, name: str) -> None: ...


class Reactions(Protocol):
    """Everything that reacts to a change in a cluster's store."""

    @property
    def kubelet(self) -> PodRunner: ...

    @property
    def hosts(self) -> SpecialPods: ...

    @property
    def disruption(self) -> BudgetSync: ...

    def changed(self, cluster: SimCluster, change: Change) -> None: ...


class Evictor(Protocol):
    def evict(self, namespace: str, name: str, eviction: dict[str, Any]) -> Response: ...


class ObjectCreator(Protocol):
    def create_object(
        self, res: Resource, route: Route, obj: dict[str, Any], dry_run: bool = False
    ) -> Entry: ...


class SimWorld(Protocol):
    """The world: one lock, one clock, one timer thread, shared by its clusters."""

    lock: threading.RLock
    clock: Clock
    tmpdir: str
    started: bool
    host_count: int
    hosts: list[Host]
    watch_timeout: float
    pod_grace_seconds: float
    join_seconds: float
    signer_delay_seconds: float
    pdb_sync_seconds: float
    pod_start_seconds: float
    node_ready_seconds: float

    @property
    def behaviours(self) -> Reactions: ...

    def schedule(self, delay: float, action: Callable[[], Any]) -> None: ...

    def background(self, fn: Callable[[], Any]) -> None: ...

    def control_plane_phase(self, action: Callable[[], Any]) -> None: ...

    def after_reset(self, action: Callable[[], Any]) -> None: ...

    def notify(self) -> None: ...

    def wait_for(self, predicate: Callable[[], Any], timeout: float = 60.0) -> Any: ...

    def record_event(self, cluster: str, kind: str, subject: str, message: str) -> None: ...

    def record_join_failure(self, node: str, reason: str) -> None: ...

    def cluster_at(self, host: str, port: int) -> SimCluster | None: ...


class SimCluster(Protocol):
    """One cluster: its store and identity, and the operations its API server offers."""

    name: str
    version: str
    control_plane_endpoint: str
    token: str
    destroyed: bool
    api_server_port: int
    hosts: dict[str, Host]
    uploaded_cert_keys: dict[str, float]
    uploaded_external_etcd_certs: bool
    external_etcd: bool
    etcd: EtcdMembers
    internal_errors: list[str]

    @property
    def world(self) -> SimWorld: ...

    @property
    def lock(self) -> threading.RLock: ...

    @property
    def store(self) -> Store: ...

    @property
    def rbac(self) -> Rbac: ...

    @property
    def ca(self) -> Any: ...

    @property
    def api(self) -> ObjectCreator: ...

    @property
    def evictions(self) -> Evictor: ...

    @property
    def host_port(self) -> str: ...

    @property
    def reachable(self) -> bool: ...

    def now(self) -> str: ...

    def next_pod_ip(self) -> str: ...

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None: ...

    def secret_values(self, namespace: str, name: str) -> dict[str, str] | None: ...

    def control_plane_nodes(self) -> list[str]: ...

    def set_node_state(self, name: str, state: str) -> None: ...

    def register_host(
        self, host: Host, control_plane: bool, taints: list[dict[str, Any]] | None = None
    ) -> None: ...

    def release_pod_cidrs(self, node: str) -> None: ...

    def add_pod(
        self,
        node: str | None,
        name: str,
        namespace: str = "default",
        labels: dict[str, str] | None = None,
        owner_kind: str | None = None,
        mirror: bool = False,
        empty_dir: bool = False,
        phase: str = "Running",
        owner_name: str | None = None,
        annotations: dict[str, str] | None = None,
        spec: dict[str, Any] | None = None,
    ) -> dict[str, Any]: ...

    def delete_pod(self, namespace: str, name: str, grace: int | None = None) -> Entry: ...

    def finish_pod(self, namespace: str, name: str, uid: str) -> None: ...

    def delete_namespace(self, name: str) -> Entry: ...

    def namespace_emptied(self, name: str) -> None: ...

    def destroy(self) -> None: ...
