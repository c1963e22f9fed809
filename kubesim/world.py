"""A world of simulated clusters and machines, sharing one lock, clock and timer thread."""

from __future__ import annotations

import heapq
import itertools
import shutil
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from kubesim.behaviours import Behaviours
from kubesim.clock import Clock
from kubesim.cluster import Cluster
from kubesim.hosts import Host, NodeSpec
from kubesim.kubeadm import DEFAULT_POD_SUBNET
from kubesim.kubeconfig import client_kubeconfig, dump

T = TypeVar("T")


@dataclass(frozen=True)
class WorldEvent:
    time: float  # world clock
    cluster: str
    kind: str  # host-reset, host-joined, join-failed, cluster-destroyed, certs-uploaded, ...
    subject: str  # usually a node name
    message: str


class World:
    """Several clusters in one process, each with its own HTTPS API server on loopback.

    Durations are real seconds, kept short for tests: ``pod_grace_seconds`` (a kubelet
    finishing a terminating pod), ``join_seconds`` (reset to registration in the target),
    ``signer_delay_seconds`` (bootstrap signer), ``pdb_sync_seconds`` (disruption controller),
    ``pod_start_seconds`` (a kubelet starting a pod), ``node_ready_seconds`` (a registered
    node's kubelet reporting Ready).
    """

    def __init__(
        self,
        pod_grace_seconds: float = 0.05,
        join_seconds: float = 0.1,
        signer_delay_seconds: float = 0.02,
        pdb_sync_seconds: float = 0.02,
        pod_start_seconds: float = 0.01,
        node_ready_seconds: float = 0.05,
        watch_timeout: float = 1800.0,
        control_plane_phase_seconds: float = 0.05,
    ) -> None:
        self.pod_grace_seconds = pod_grace_seconds
        self.join_seconds = join_seconds
        self.signer_delay_seconds = signer_delay_seconds
        self.pdb_sync_seconds = pdb_sync_seconds
        self.pod_start_seconds = pod_start_seconds
        self.node_ready_seconds = node_ready_seconds
        self.control_plane_phase_seconds = control_plane_phase_seconds
        self._phase_held = False
        self._held_phases: list[Callable[[], Any]] = []
        self._joins_held = False
        self._held_joins: list[Callable[[], Any]] = []
        self.watch_timeout = watch_timeout
        self.lock = threading.RLock()
        self._changed = threading.Condition(self.lock)
        self._timer = threading.Condition(self.lock)
        self._version = 0
        self.clock = Clock()
        self.clusters: dict[str, Cluster] = {}
        self.hosts: list[Host] = []
        self.host_count = 0
        self.join_failures: list[tuple[str, str]] = []
        self.events: list[WorldEvent] = []
        self.internal_errors: list[str] = []
        self.behaviours = Behaviours(self)
        self.tmpdir = tempfile.mkdtemp(prefix="kubesim-")
        self.started = False
        self._stopping = False
        self._heap: list[tuple[float, int, Callable[[], Any]]] = []
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None
        self._helpers: list[threading.Thread] = []

    # ---- building ----------------------------------------------------------------------
    def add_cluster(
        self,
        name: str,
        version: str = "v1.31.4",
        control_plane_endpoint: str = "",
        nodes: Iterable[NodeSpec] = (),
        pod_subnet: str = DEFAULT_POD_SUBNET,
        node_cidr_mask_size: int = 24,
        cgroup_driver: str = "systemd",
        server_tls_bootstrap: bool = False,
        external_etcd: bool = False,
    ) -> Cluster:
        """``pod_subnet``: kubeadm's ``networking.podSubnet`` ("" for none: no node gets a
        podCIDR; "10.244.0.0/16,fd00::/56" dual-stack); ``node_cidr_mask_size``: the controller
        manager's ``--node-cidr-mask-size`` for IPv4 (kubesim.node_ipam). ``cgroup_driver`` and
        ``server_tls_bootstrap``: those fields of kube-system/kubelet-config. ``external_etcd``:
        kubeadm-config's ``etcd.external`` (endpoints, cert paths); its control planes then run
        no etcd of their own (no ``etcd-<node>`` mirror pod, no stacked member)."""
        with self.lock:
            if name in self.clusters:
                raise ValueError(f"cluster {name} already exists")
            cluster = Cluster(
                self,
                name,
                version,
                control_plane_endpoint,
                len(self.clusters),
                pod_subnet=pod_subnet,
                node_cidr_mask_size=node_cidr_mask_size,
                external_etcd=external_etcd,
            )
            self.clusters[name] = cluster
            cluster.set_kubelet_config(cgroup_driver, server_tls_bootstrap)
            for spec in nodes:
                cluster.add_node(spec)
            if self.started:
                cluster.start()
            return cluster

    def cluster(self, name: str) -> Cluster:
        return self.clusters[name]

    def host(self, name: str, cluster: str | None = None) -> Host:
        """The machine whose node is named ``name`` (``host.cluster``: where it is now)."""
        with self.lock:
            found = [h for h in self.hosts if h.name == name]
            if cluster is not None:
                found = [h for h in found if cluster in h.history]
            if not found:
                raise KeyError(f"no host named {name}")
            if len(found) > 1:
                raise KeyError(f"several hosts are named {name}: pass cluster=")
            return found[0]

    def cluster_at(self, host: str, port: int) -> Cluster | None:
        """The live cluster whose API server answers at host:port (its own address, or its
        controlPlaneEndpoint)."""
        with self.lock:
            for cluster in self.clusters.values():
                if not cluster.destroyed and (host.lower(), port) in cluster.endpoints:
                    return cluster
        return None

    # ---- lifecycle ---------------------------------------------------------------------
    def start(self) -> World:
        with self.lock:
            if self.started:
                return self
            self.started = True
            self._thread = threading.Thread(
                target=self._run, name="kubesim-controller", daemon=True
            )
            self._thread.start()
            clusters = list(self.clusters.values())
        for cluster in clusters:
            cluster.start()
        return self

    def stop(self) -> None:
        with self.lock:
            self._stopping = True
            self._timer.notify_all()
            clusters = list(self.clusters.values())
        for cluster in clusters:
            cluster.stop()
        if self._thread is not None:
            self._thread.join(5)
        for helper in list(self._helpers):
            helper.join(5)
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    def __enter__(self) -> World:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def background(self, fn: Callable[[], Any]) -> None:
        """Run ``fn`` on a thread of its own (joined by ``stop``)."""
        thread = threading.Thread(target=fn, daemon=True, name="kubesim-helper")
        self._helpers.append(thread)
        thread.start()

    # ---- timer -------------------------------------------------------------------------
    def schedule(self, delay: float, action: Callable[[], Any]) -> None:
        """Run ``action`` under the world lock on the controller thread after ``delay``."""
        with self.lock:
            heapq.heappush(
                self._heap, (time.monotonic() + max(0.0, delay), next(self._seq), action)
            )
            self._timer.notify_all()

    def control_plane_phase(self, action: Callable[[], Any]) -> None:
        """Run a control-plane join's last phase after `control_plane_phase_seconds`, or when
        `hold_control_plane_phase(False)` releases it."""
        with self.lock:
            if self._phase_held:
                self._held_phases.append(action)
            else:
                self.schedule(self.control_plane_phase_seconds, action)

    def fail_image_pulls(self, node: str, image: str, fail: bool = True) -> None:
        """Pulls of `image` on the host `node` fail (its pods stay Pending, ImagePullBackOff),
        or, with `fail=False`, succeed again: the kubelet's back-off then retries its Pending
        pods at once (a pod deleted meanwhile is never started)."""
        with self.lock:
            host = self.host(node)
            if fail:
                host.unpullable_images.add(image)
                return
            host.unpullable_images.discard(image)
            cluster = self.clusters.get(host.cluster or "")
            if cluster is not None:
                self.behaviours.kubelet.retry_pulls(cluster, host)

    def hold_control_plane_phase(self, hold: bool = True) -> None:
        """Hold (True) or release (False) the control-plane-join phase of joining hosts: held,
        a joined control plane stays Ready without its etcd and kube-apiserver."""
        with self.lock:
            self._phase_held = hold
            if not hold:
                for action in self._held_phases:
                    self.schedule(0.0, action)
                self._held_phases.clear()

    def after_reset(self, action: Callable[[], Any]) -> None:
        """A reset host's join (``action``) after `join_seconds`, or, while joins are held
        (`hold_joins`), when they are released: a test can then see every host waiting."""
        with self.lock:
            if self._joins_held:
                self._held_joins.append(action)
            else:
                self.schedule(self.join_seconds, action)

    def hold_joins(self, hold: bool = True) -> None:
        """Hold (True) or release (False) the joins of reset hosts, as a slow kubeadm would."""
        with self.lock:
            self._joins_held = hold
            if not hold:
                for action in self._held_joins:
                    self.schedule(0.0, action)
                self._held_joins.clear()

    def hold_kubelet_csrs(self, hold: bool = True) -> None:
        """Hold (or release) the serving-certificate requests kubelets file when their
        cluster's kubelet-config sets serverTLSBootstrap: held, they are filed on release."""
        self.behaviours.certificates.hold(hold)

    def _run(self) -> None:
        with self.lock:
            while not self._stopping:
                now = time.monotonic()
                if self._heap and self._heap[0][0] <= now:
                    _, _, action = heapq.heappop(self._heap)
                    try:
                        action()
                    except Exception:
                        self.internal_errors.append(traceback.format_exc())
                    continue
                timeout = self._heap[0][0] - now if self._heap else None
                self._timer.wait(timeout)

    # ---- waiting -----------------------------------------------------------------------
    def notify(self) -> None:
        with self.lock:
            self._version += 1
            self._changed.notify_all()

    def wait_for(self, predicate: Callable[[], T], timeout: float = 60.0) -> T:
        """Return ``predicate()`` once truthy; it is re-evaluated after every state change
        (without the world lock held, so it may even call the API). TimeoutError otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                version = self._version
            result = predicate()
            if result:
                return result
            with self.lock:
                while self._version == version:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise TimeoutError(f"condition not met within {timeout} s")
                    self._changed.wait(remaining)

    def advance_clock(self, seconds: float) -> None:
        """Move the world clock forward (token and uploaded-certificate expiry follow)."""
        self.clock.advance(seconds)
        with self.lock:
            for cluster in self.clusters.values():
                self.behaviours.signer.clean(cluster)
                self.behaviours.signer.sign(cluster)
                self.behaviours.hosts.expire_certs(cluster)
            self.notify()

    # ---- records -----------------------------------------------------------------------
    def record_event(self, cluster: str, kind: str, subject: str, message: str) -> None:
        with self.lock:
            self.events.append(WorldEvent(self.clock.time(), cluster, kind, subject, message))
            self.notify()

    def record_join_failure(self, node: str, reason: str) -> None:
        with self.lock:
            self.join_failures.append((node, reason))
            self.record_event("", "join-failed", node, reason)

    def join_failure(self, node: str) -> str | None:
        """The last recorded reason why ``node`` could not join, if any."""
        with self.lock:
            for name, reason in reversed(self.join_failures):
                if name == node:
                    return reason
        return None

    # ---- kubeconfig --------------------------------------------------------------------
    def kubeconfig_dict(
        self, current: str | None = None, only: Iterable[str] | None = None
    ) -> dict[str, Any]:
        wanted = set(only) if only is not None else set(self.clusters)
        entries = [
            (c.name, c.client_server, c.client_ca_pem, c.token)
            for c in self.clusters.values()
            if c.name in wanted
        ]
        return client_kubeconfig(entries, current)

    def write_kubeconfig(
        self, path: str | Path, current: str | None = None, only: Iterable[str] | None = None
    ) -> Path:
        """One file with a context per cluster (context name = cluster name); `only`: just
        those clusters (one host's own kubeconfig, as a provisioning system hands it over)."""
        target = Path(path)
        target.write_text(dump(self.kubeconfig_dict(current, only)))
        return target
