"""One simulated kubeadm cluster: its objects, API server, RBAC, faults and request log."""

from __future__ import annotations

import secrets
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlencode

from kubesim import node_objects, objects, pod_objects, workload_objects
from kubesim.api import Api
from kubesim.behaviours import static_pods
from kubesim.behaviours.eviction import Evictions
from kubesim.clock import rfc3339
from kubesim.faults import Faults
from kubesim.hosts import CONTROL_PLANE_LABEL, Host, NodeSpec
from kubesim.http_messages import Request, Response, error_response
from kubesim.kubeadm import cluster_configuration, normalise_endpoint
from kubesim.kubeconfig import client_kubeconfig, cluster_info_kubeconfig, dump
from kubesim.pki import CertificateAuthority, server_context
from kubesim.proxy import Proxy
from kubesim.rbac import Rbac
from kubesim.request_log import RequestLog, RequestRecord
from kubesim.resources import (
    CONFIGMAPS,
    DAEMONSETS,
    NAMESPACES,
    NODES,
    PDBS,
    PODS,
    REPLICASETS,
    SECRETS,
    Resource,
)
from kubesim.selectors import parse_label_selector
from kubesim.server import ApiServer
from kubesim.store import Change, Entry, Store

if TYPE_CHECKING:
    from kubesim.protocols import SimWorld

T = TypeVar("T")
SEED_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")


class Cluster:
    """Made by ``World.add_cluster``; the attributes below are the test-facing API."""

    def __init__(
        self,
        world: SimWorld,
        name: str,
        version: str,
        control_plane_endpoint: str,
        index: int,
    ) -> None:
        objects.parse_version(version)
        self.world = world
        self.name = name
        self.version = version
        self.control_plane_endpoint = control_plane_endpoint
        self.index = index
        self.lock = world.lock
        self.store = Store(world.lock, world.clock, self._on_change)
        self.rbac = Rbac()
        self.faults = Faults(self.set_reachable)
        self.request_log = RequestLog()
        self.internal_errors: list[str] = []
        self.token = secrets.token_urlsafe(24)
        self.ca = CertificateAuthority(f"kubernetes-{name}")
        self.ca_pem = self.ca.cert_pem.decode()
        self.ca_cert_hash = self.ca.cert_hash()
        dns = [
            "localhost",
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
            "kubernetes.default.svc.cluster.local",
        ]
        parsed = normalise_endpoint(control_plane_endpoint) if control_plane_endpoint else None
        ips = ["127.0.0.1", "::1", "10.96.0.1"]
        if parsed and parsed[0] not in ips:
            try:
                import ipaddress

                ipaddress.ip_address(parsed[0])
                ips.append(parsed[0])
            except ValueError:
                dns.append(parsed[0])
        self._http = ApiServer(self, server_context(self.ca.issue_server_cert(dns, ips)))
        self.port = self._http.bind()
        self.destroyed = False
        self._reachable = True
        self.hosts: dict[str, Host] = {}  # node name -> machine, for nodes with a kubelet
        self.api_server_port = static_pods.API_SERVER_PORT  # kube-apiserver --secure-port
        self.uploaded_cert_keys: dict[str, float] = {}  # certificate key -> expiry (world time)
        self.api = Api(self)
        self.evictions = Evictions(self)
        self._pod_ips = 0
        self._node_count = 0
        self._ca_file: str | None = None
        self.proxy: Proxy | None = None  # clients reach the cluster through it (add_proxy)
        self.kubeconfig_extra_cas: list[bytes] = []  # put before the CA in client kubeconfigs
        self._seed()

    # ---- identity ----------------------------------------------------------------------
    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def host_port(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def endpoints(self) -> set[tuple[str, int]]:
        """Every host:port that reaches this API server inside the world."""
        found = {("127.0.0.1", self.port), ("localhost", self.port)}
        if self.control_plane_endpoint:
            parsed = normalise_endpoint(self.control_plane_endpoint)
            if parsed:
                found.add(parsed)
        return found

    @property
    def ca_file(self) -> str:
        """Path of a file holding the CA certificate (for clients that want a file)."""
        if self._ca_file is None:
            path = Path(self.world.tmpdir, f"{self.name}-ca.crt")
            path.write_text(self.ca_pem)
            self._ca_file = str(path)
        return self._ca_file

    def now(self) -> str:
        return rfc3339(self.world.clock.time())

    # ---- seeding -----------------------------------------------------------------------
    def _seed(self) -> None:
        for ns in SEED_NAMESPACES:
            self.store.create(NAMESPACES, objects.namespace_object(ns))
        config = cluster_configuration(self.name, self.version, self.control_plane_endpoint)
        self.store.create(
            CONFIGMAPS,
            objects.configmap_object(
                "kube-system", "kubeadm-config", {"ClusterConfiguration": config}
            ),
        )
        kubeconfig = cluster_info_kubeconfig(self._cluster_info_server(), self.ca.cert_pem)
        self.store.create(
            CONFIGMAPS,
            objects.configmap_object("kube-public", "cluster-info", {"kubeconfig": kubeconfig}),
        )

    def _cluster_info_server(self) -> str:
        if self.control_plane_endpoint:
            return f"https://{self.control_plane_endpoint}"
        return self.server

    # ---- nodes -------------------------------------------------------------------------
    def _new_host(self, spec: NodeSpec) -> Host:
        self.world.host_count += 1
        n = self.world.host_count
        return Host(
            name=spec.name,
            kubelet_version=spec.kubelet_version or self.version,
            architecture=spec.architecture,
            operating_system=spec.operating_system,
            os_image=spec.os_image,
            container_runtime=spec.container_runtime,
            internal_ip=f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}",
            cluster=self.name,
            role=spec.role,
            history=[self.name],
        )

    def _pod_cidr(self) -> str:
        self._node_count += 1
        n = self._node_count
        return f"10.244.{n % 256}.0/24"

    def add_node(self, spec: NodeSpec) -> dict[str, Any]:
        """A machine running a kubelet that registered as ``spec.name``."""
        return self._add_node(spec, self.now()).copy()

    def _add_node(self, spec: NodeSpec, now: str) -> Entry:
        with self.lock:
            if self.store.get(NODES, "", spec.name) is not None:
                from kubesim.errors import already_exists

                raise already_exists("nodes", spec.name)
            host = self._new_host(spec)
            self.world.hosts.append(host)
            self.hosts[spec.name] = host
            obj = node_objects.node_object(
                host,
                self._pod_cidr(),
                "ready" if spec.ready else "not-ready",
                now,
                labels=spec.labels,
                taints=spec.taints,
                unschedulable=spec.unschedulable,
            )
            entry = self.store.create(NODES, obj)
            if spec.role == "control-plane":
                static_pods.add_control_plane_pods(self, host, ready=spec.ready)
            return entry

    def add_nodes(self, n: int, prefix: str = "w", start: int = 1, **kwargs: Any) -> list[str]:
        """``n`` nodes named ``{prefix}-{i}`` (NodeSpec keyword arguments apply to all)."""
        names = [f"{prefix}-{i}" for i in range(start, start + n)]
        now = self.now()
        with self.lock:
            for name in names:
                self._add_node(NodeSpec(name, **kwargs), now)
        return names

    def register_host(self, host: Host, control_plane: bool) -> None:
        """A host that joined: its Node registers NotReady, then its kubelet reports Ready.

        A control plane, as kubeadm does it: the kubelet starts (the node turns Ready) before
        the control-plane-join phase adds the etcd member, starts the static pods and marks the
        node (`World.control_plane_phase_seconds` after Ready; `World.hold_control_plane_phase`
        holds it)."""
        with self.lock:
            host.role = "worker"  # the control-plane label comes with the control-plane phase
            host.cluster = self.name
            host.kubelet_running = True
            host.history.append(self.name)
            self.hosts[host.name] = host
            obj = node_objects.node_object(host, self._pod_cidr(), "not-ready", self.now())
            self.store.create(NODES, obj)
            self.world.schedule(
                self.world.node_ready_seconds, lambda: self._node_ready(host, control_plane)
            )

    def _node_ready(self, host: Host, control_plane: bool = False) -> None:
        if self.hosts.get(host.name) is host and host.kubelet_running:
            self.set_node_state(host.name, "ready")
            if control_plane:
                self.world.control_plane_phase(
                    lambda: static_pods.finish_control_plane_join(self, host)
                )

    def set_node_state(self, name: str, state: str) -> None:
        """ready, not-ready or unknown: conditions and the lifecycle taints that go with it."""
        now = self.now()
        self.store.mutate(NODES, "", name, lambda obj: node_objects.set_node_state(obj, state, now))

    def stop_kubelet(self, name: str) -> None:
        """The node's kubelet stops: Ready=Unknown, unreachable taints; its pods stay as they
        are (a terminating pod stays Terminating)."""
        with self.lock:
            host = self.hosts.get(name)
            if host is not None:
                host.kubelet_running = False
            self.set_node_state(name, "unknown")
            static_pods.set_ready(self, name, False)  # the node controller marks them NotReady

    def start_kubelet(self, name: str) -> None:
        with self.lock:
            host = self.hosts.get(name)
            if host is None:
                raise KeyError(f"{name} has no kubelet in {self.name}")
            host.kubelet_running = True
            self.set_node_state(name, "ready")
            static_pods.set_ready(self, name, True)
            for entry in self.store.list(PODS):
                if entry.obj.get("spec", {}).get("nodeName") == name:
                    self.world.behaviours.kubelet.pod_changed(self, entry)

    def host_of(self, node: str) -> Host | None:
        return self.hosts.get(node)

    def control_plane_nodes(self) -> list[str]:
        sel = parse_label_selector(CONTROL_PLANE_LABEL)
        return [e.meta["name"] for e in self.store.list(NODES, labels=sel)]

    # ---- pods --------------------------------------------------------------------------
    def next_pod_ip(self) -> str:
        self._pod_ips += 1
        n = self._pod_ips
        return f"10.244.{(n // 250) % 256}.{n % 250 + 2}"

    def add_namespace(self, name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
        return self.store.create(NAMESPACES, objects.namespace_object(name, labels)).copy()

    def _ensure_namespace(self, name: str) -> None:
        if self.store.get(NAMESPACES, "", name) is None:
            self.add_namespace(name)

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
    ) -> dict[str, Any]:
        """A pod bound to ``node``. ``phase="Running"`` makes it Running and Ready at once;
        ``"Pending"`` leaves it to the node's kubelet (it starts shortly if the kubelet runs).
        ``spec`` entries override the generated pod spec."""
        with self.lock:
            self._ensure_namespace(namespace)
            owner = self._owner(namespace, owner_kind, owner_name or f"{name}-owner", labels or {})
            notes = dict(annotations or {})
            if mirror:
                notes[pod_objects.MIRROR_ANNOTATION] = secrets.token_hex(16)
                owner = {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "name": node or "",
                    "uid": self._node_uid(node),
                    "controller": True,
                }
            obj = pod_objects.pod_object(namespace, name, node, labels, notes, owner, empty_dir)
            if spec:
                obj["spec"].update(spec)
                pod_objects.default_pod(obj)
            now = self.now()
            if node:
                pod_objects.set_pod_scheduled(obj, now)
            if node and phase == "Running":
                pod_objects.set_pod_running(obj, self.hosts.get(node), self.next_pod_ip(), now)
            elif phase in ("Succeeded", "Failed"):
                pod_objects.set_pod_finished(
                    obj, self.hosts.get(node or ""), now, phase == "Succeeded"
                )
            return self.store.create(PODS, obj).copy()

    def _node_uid(self, node: str | None) -> str:
        entry = self.store.get(NODES, "", node or "")
        return entry.meta["uid"] if entry else ""

    def _owner(
        self, namespace: str, kind: str | None, name: str, labels: dict[str, str]
    ) -> dict[str, Any] | None:
        if kind is None:
            return None
        res: Resource | None = {"DaemonSet": DAEMONSETS, "ReplicaSet": REPLICASETS}.get(kind)
        uid = ""
        api_version = "apps/v1"
        if res is not None:
            entry = self.store.get(res, namespace, name)
            if entry is None:
                owner_labels = labels or {"app": name}
                if res is DAEMONSETS:
                    obj = workload_objects.daemonset_object(namespace, name, owner_labels)
                else:
                    obj = workload_objects.default_replicaset(
                        {
                            "apiVersion": "apps/v1",
                            "kind": "ReplicaSet",
                            "metadata": objects.meta(name, namespace, labels=dict(owner_labels)),
                            "spec": {"selector": {"matchLabels": dict(owner_labels)}},
                        }
                    )
                entry = self.store.create(res, obj)
            elif res is REPLICASETS:  # one more pod of this ReplicaSet: one more replica
                grown = entry.copy()
                grown["spec"]["replicas"] = int(grown["spec"].get("replicas", 1)) + 1
                entry = self.store.put(res, grown)
            uid = entry.meta["uid"]
        else:
            api_version = {"Job": "batch/v1", "StatefulSet": "apps/v1"}.get(kind, "v1")
            uid = secrets.token_hex(16)
        return {
            "apiVersion": api_version,
            "kind": kind,
            "name": name,
            "uid": uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }

    def delete_pod(self, namespace: str, name: str, grace: int | None = None) -> Entry:
        """Graceful deletion as the API server does it.

        A pod bound to a node gets deletionTimestamp + deletionGracePeriodSeconds and stays
        Terminating until that node's kubelet finishes it; an unbound or finished pod, or
        ``grace == 0``, goes at once.
        """
        with self.lock:
            entry = self.store.require(PODS, namespace, name)
            pod = entry.obj
            bound = bool(pod.get("spec", {}).get("nodeName"))
            finished = pod.get("status", {}).get("phase") in ("Succeeded", "Failed")
            if grace is None:
                grace = int(pod.get("spec", {}).get("terminationGracePeriodSeconds", 30))
            meta = pod["metadata"]
            if not bound or finished or grace <= 0:
                return self._remove_pod(namespace, name, bool(meta.get("deletionTimestamp")))
            if meta.get("deletionTimestamp") and grace >= int(
                meta.get("deletionGracePeriodSeconds", 0)
            ):
                return entry
            deadline = rfc3339(self.world.clock.time() + grace)

            def terminate(obj: dict[str, Any]) -> None:
                obj["metadata"]["deletionTimestamp"] = deadline
                obj["metadata"]["deletionGracePeriodSeconds"] = grace

            result = self.store.mutate(PODS, namespace, name, terminate)
            assert result is not None
            return result

    def _remove_pod(self, namespace: str, name: str, terminating: bool) -> Entry:
        """Immediate deletion as the API server does it: the last copy carries a deletion
        timestamp and grace 0; a pod that was Terminating is first updated to grace 0 (a
        watch sees MODIFIED, then DELETED)."""
        now = self.now()

        def stamp(obj: dict[str, Any]) -> None:
            obj["metadata"]["deletionTimestamp"] = now
            obj["metadata"]["deletionGracePeriodSeconds"] = 0

        if terminating:
            self.store.mutate(PODS, namespace, name, stamp)
        return self.store.remove(PODS, namespace, name, last=stamp)

    def finish_pod(self, namespace: str, name: str, uid: str) -> None:
        """The kubelet confirms the pod is gone (its DELETE with grace 0): the object goes."""
        with self.lock:
            entry = self.store.get(PODS, namespace, name)
            if entry is not None and entry.meta.get("uid") == uid:
                self._remove_pod(namespace, name, bool(entry.meta.get("deletionTimestamp")))

    def delete_namespace(self, name: str) -> Entry:
        """Terminating first; the namespace controller removes its content, then it."""
        with self.lock:
            entry = self.store.require(NAMESPACES, "", name)
            if entry.obj.get("status", {}).get("phase") == "Terminating":
                return entry
            now = self.now()

            def terminate(obj: dict[str, Any]) -> None:
                obj["metadata"]["deletionTimestamp"] = now
                obj["status"]["phase"] = "Terminating"

            result = self.store.mutate(NAMESPACES, "", name, terminate)
            assert result is not None
            self.world.schedule(0, lambda: self._empty_namespace(name))
            return result

    def _empty_namespace(self, name: str) -> None:
        from kubesim.resources import RESOURCES

        for res in RESOURCES.values():
            if not res.namespaced:
                continue
            for entry in self.store.list(res, name):
                if res is PODS:
                    self.delete_pod(name, entry.meta["name"])
                else:
                    self.store.remove(res, name, entry.meta["name"])
        if not self.store.list(PODS, name) and self.store.get(NAMESPACES, "", name) is not None:
            self.store.remove(NAMESPACES, "", name)

    def namespace_emptied(self, name: str) -> None:
        ns = self.store.get(NAMESPACES, "", name)
        terminating = ns is not None and ns.obj.get("status", {}).get("phase") == "Terminating"
        if terminating and not self.store.list(PODS, name):
            self.store.remove(NAMESPACES, "", name)

    # ---- other objects -----------------------------------------------------------------
    def add_pdb(
        self,
        name: str,
        namespace: str,
        selector_labels: dict[str, str],
        min_available: int | str | None = None,
        max_unavailable: int | str | None = None,
        synced: bool = True,
    ) -> dict[str, Any]:
        """A PodDisruptionBudget; ``synced=False`` leaves it for the disruption controller
        (evictions answer "still being processed" until it syncs)."""
        with self.lock:
            self._ensure_namespace(namespace)
            obj = workload_objects.pdb_object(
                namespace, name, selector_labels, min_available, max_unavailable
            )
            self.store.create(PDBS, obj)
            if synced:
                self.world.behaviours.disruption.sync(self, namespace, name)
            entry = self.store.require(PDBS, namespace, name)
            return entry.copy()

    def add_secret(
        self, namespace: str, name: str, data: dict[str, bytes | str], type_: str = "Opaque"
    ) -> dict[str, Any]:
        with self.lock:
            self._ensure_namespace(namespace)
            return self.store.create(
                SECRETS, objects.secret_object(namespace, name, data, type_)
            ).copy()

    def add_configmap(self, namespace: str, name: str, data: dict[str, str]) -> dict[str, Any]:
        with self.lock:
            self._ensure_namespace(namespace)
            return self.store.create(
                CONFIGMAPS, objects.configmap_object(namespace, name, data)
            ).copy()

    # ---- reading state (copies, safe to keep) ------------------------------------------
    def _read(self, res: Resource, namespace: str, name: str) -> dict[str, Any] | None:
        entry = self.store.get(res, namespace, name)
        return entry.copy() if entry else None

    def node(self, name: str) -> dict[str, Any] | None:
        return self._read(NODES, "", name)

    def nodes(self, label_selector: str | None = None) -> list[dict[str, Any]]:
        sel = parse_label_selector(label_selector)
        return [e.copy() for e in self.store.list(NODES, labels=sel)]

    def node_names(self) -> list[str]:
        return [e.meta["name"] for e in self.store.list(NODES)]

    def pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self._read(PODS, namespace, name)

    def pods(self, namespace: str | None = None, node: str | None = None) -> list[dict[str, Any]]:
        entries = self.store.list(PODS, namespace)
        return [
            e.copy()
            for e in entries
            if node is None or e.obj.get("spec", {}).get("nodeName") == node
        ]

    def pdb(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self._read(PDBS, namespace, name)

    def secret(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self._read(SECRETS, namespace, name)

    def secret_values(self, namespace: str, name: str) -> dict[str, str] | None:
        obj = self.secret(namespace, name)
        return None if obj is None else objects.secret_values(obj)

    def configmap(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self._read(CONFIGMAPS, namespace, name)

    def namespace(self, name: str) -> dict[str, Any] | None:
        return self._read(NAMESPACES, "", name)

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        """Any stored object by plural resource name (``daemonsets``, ``leases``...)."""
        from kubesim.resources import RESOURCES

        for res in RESOURCES.values():
            if res.name == resource:
                return self._read(res, namespace, name)
        raise KeyError(resource)

    def wait_for(self, predicate: Callable[[], T], timeout: float = 5.0) -> T:
        """Block until ``predicate()`` is truthy (re-checked on every state change)."""
        return self.world.wait_for(predicate, timeout)

    # ---- reachability ------------------------------------------------------------------
    @property
    def reachable(self) -> bool:
        return self._reachable and not self.destroyed

    def set_reachable(self, reachable: bool) -> None:
        """False: stop listening and cut connections; True: listen again on the same port."""
        if self.destroyed and reachable:
            raise RuntimeError(f"cluster {self.name} was destroyed")
        self._reachable = reachable
        if reachable:
            if self.world.started:
                self._http.start()
        else:
            self.store.close_watches()
            self._http.stop()

    def destroy(self) -> None:
        """The cluster is gone (its last control plane left): connections are refused."""
        self.destroyed = True
        self._reachable = False
        self.world.record_event(self.name, "cluster-destroyed", self.name, "no control plane left")
        self.store.close_watches()
        # stopping the server joins its connection threads, which may wait for the world
        # lock held by our caller: stop it from a thread of its own
        self.world.background(self._http.stop)

    def start(self) -> None:
        if self.reachable:
            self._http.start()
        if self.proxy is not None:
            self.proxy.start()

    def stop(self) -> None:
        self.store.close_watches()
        self._http.stop()
        if self.proxy is not None:
            self.proxy.stop()

    # ---- HTTP side ---------------------------------------------------------------------
    def serve(self, req: Request) -> Response:
        target = req.path + ("?" + urlencode(req.query) if req.query else "")
        latency, error = self.faults.decide(req.method, target)
        if latency:
            time.sleep(latency)
        if error is not None:
            return error_response(error)
        return self.api.handle(req)

    def record(self, req: Request, status: int, bytes_out: int, seconds: float) -> RequestRecord:
        route, attrs = self.api.attributes(req)
        entry = RequestRecord(
            method=req.method,
            path=req.path,
            query=dict(req.query),
            status=status,
            bytes_out=bytes_out,
            verb=attrs.verb if attrs else req.method.lower(),
            resource=attrs.resource if attrs else "",
            namespace=attrs.namespace if attrs else "",
            name=attrs.name if attrs else "",
            subresource=attrs.subresource if attrs else "",
            seconds=seconds,
        )
        self.request_log.append(entry)
        del route
        return entry

    @property
    def requests(self) -> list[RequestRecord]:
        return self.request_log.records

    def finish_record(self, entry: RequestRecord, bytes_out: int, seconds: float) -> None:
        self.request_log.finish(entry, bytes_out, seconds)

    def wait_for_requests(
        self, predicate: Callable[[list[RequestRecord]], bool], timeout: float = 5.0
    ) -> list[RequestRecord]:
        """Block until ``predicate(requests)`` holds, re-evaluated as each request is logged
        (answers that change no state, such as a refused eviction, wake no ``wait_for``)."""
        return self.request_log.wait_for(predicate, timeout)

    def reset_requests(self) -> None:
        self.requests.clear()

    def requests_for(
        self, verb: str | None = None, resource: str | None = None
    ) -> list[RequestRecord]:
        return self.request_log.matching(verb, resource)

    # ---- kubeconfig --------------------------------------------------------------------
    def add_proxy(self) -> Proxy:
        """A TLS-terminating proxy in front of the API server, with a CA of its own; client
        kubeconfigs (`kubeconfig_dict`, `api_client`) go through it from now on, while
        cluster-info keeps the cluster's own server and CA."""
        with self.lock:
            if self.proxy is None:
                self.proxy = Proxy(self)
                if self.world.started:
                    self.proxy.start()
            return self.proxy

    def set_cluster_info_cas(self, extra_pems: list[bytes]) -> None:
        """cluster-info's CA data becomes a bundle: the cluster's CA, then `extra_pems` (a CA
        rotation under way). The bootstrap signer signs it again."""
        with self.lock:
            bundle = self.ca.cert_pem + b"".join(extra_pems)
            kubeconfig = cluster_info_kubeconfig(self._cluster_info_server(), bundle)

            def rewrite(obj: dict[str, Any]) -> None:
                obj["data"] = {"kubeconfig": kubeconfig}  # old signatures no longer match

            self.store.mutate(CONFIGMAPS, "kube-public", "cluster-info", rewrite)

    @property
    def client_server(self) -> str:
        return self.proxy.server if self.proxy else self.server

    @property
    def client_ca_pem(self) -> bytes:
        """The CA data a client kubeconfig carries (a bundle when extra CAs are set)."""
        own = self.proxy.ca_pem if self.proxy else self.ca.cert_pem
        return b"".join(self.kubeconfig_extra_cas) + own

    def kubeconfig_dict(self, context: str | None = None) -> dict[str, Any]:
        name = context or self.name
        return client_kubeconfig([(name, self.client_server, self.client_ca_pem, self.token)], name)

    def write_kubeconfig(self, path: str | Path, context: str | None = None) -> Path:
        target = Path(path)
        target.write_text(dump(self.kubeconfig_dict(context)))
        return target

    def api_client(self) -> Any:
        """A ``kubernetes.client.ApiClient`` for this cluster (official client, over HTTPS)."""
        from kubernetes import client

        config = client.Configuration()
        config.host = self.client_server
        if self.proxy or self.kubeconfig_extra_cas:
            path = Path(self.world.tmpdir, f"{self.name}-client-ca.crt")
            path.write_bytes(self.client_ca_pem)
            config.ssl_ca_cert = str(path)
        else:
            config.ssl_ca_cert = self.ca_file
        config.api_key = {"authorization": self.token}
        config.api_key_prefix = {"authorization": "Bearer"}
        return client.ApiClient(config)

    # ---- behaviours --------------------------------------------------------------------
    def _on_change(self, change: Change) -> None:
        self.world.behaviours.changed(self, change)
        self.world.notify()

    def entries(self, res: Resource, namespace: str | None = None) -> Iterable[Entry]:
        return self.store.list(res, namespace)

    def __repr__(self) -> str:
        return f"<Cluster {self.name} {self.version} {self.server}>"


def temp_dir() -> str:
    return tempfile.mkdtemp(prefix="kubesim-")
