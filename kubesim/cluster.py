"""One simulated kubeadm cluster: its objects, API server, RBAC, faults and request log."""

from __future__ import annotations

import secrets
import tempfile
import time
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from kubesim import objects
from kubesim.api import Api
from kubesim.behaviours import static_pods
from kubesim.behaviours.eviction import Evictions
from kubesim.cluster_certs import ClusterCerts
from kubesim.cluster_clients import ClusterClients
from kubesim.cluster_nodes import ClusterNodes
from kubesim.cluster_objects import ClusterObjects
from kubesim.entries import Change
from kubesim.etcd import EtcdMembers, member_id
from kubesim.faults import Faults
from kubesim.flow_control import FlowControl
from kubesim.hosts import Host
from kubesim.http_messages import Request, Response, error_response
from kubesim.kubeadm import DEFAULT_POD_SUBNET, cluster_configuration, normalise_endpoint
from kubesim.kubeconfig import cluster_info_kubeconfig
from kubesim.node_ipam import DEFAULT_MASK, NodeIpam
from kubesim.pki import CertificateAuthority, server_context
from kubesim.proxy import Proxy
from kubesim.rbac import Rbac
from kubesim.request_log import RequestLog, RequestRecord
from kubesim.resources import CONFIGMAPS, NAMESPACES
from kubesim.server import ApiServer
from kubesim.store import Store

if TYPE_CHECKING:
    from kubesim.protocols import SimWorld

SEED_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")


class Cluster(ClusterNodes, ClusterObjects, ClusterClients, ClusterCerts):
    """Made by ``World.add_cluster``. Its test-facing API is this class and its parts
    (``ClusterNodes``, ``ClusterObjects``, ``ClusterClients``, ``ClusterReads``)."""

    def __init__(
        self,
        world: SimWorld,
        name: str,
        version: str,
        control_plane_endpoint: str,
        index: int,
        pod_subnet: str = DEFAULT_POD_SUBNET,
        node_cidr_mask_size: int = DEFAULT_MASK[4],
        external_etcd: bool = False,
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
        self.flow_control = FlowControl()  # API Priority and Fairness: off until configured
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
        # the upload's certificates include external etcd's client ones (`--config` was given)
        self.uploaded_external_etcd_certs = False
        self.external_etcd = external_etcd  # kubeadm-config's etcd.external: no stacked members
        self.etcd = EtcdMembers(member_id(name, "cluster"))  # kubesim.etcd: stacked members
        self.api = Api(self)
        self.evictions = Evictions(self)
        self._pod_ips = 0
        self.pod_subnet = pod_subnet
        self.node_cidr_mask_size = node_cidr_mask_size
        self.ipam = NodeIpam(pod_subnet, node_cidr_mask_size)  # the controller manager's
        self._ca_file: str | None = None
        self.proxy: Proxy | None = None  # clients reach the cluster through it (add_proxy)
        self.kubeconfig_extra_cas: list[bytes] = []  # put before the CA in client kubeconfigs
        self._seed()

    # ---- seeding -----------------------------------------------------------------------
    def _seed(self) -> None:
        for ns in SEED_NAMESPACES:
            self.store.create(NAMESPACES, objects.namespace_object(ns))
        config = cluster_configuration(
            self.name,
            self.version,
            self.control_plane_endpoint,
            self.pod_subnet,
            self.node_cidr_mask_size,
            external_etcd=self.external_etcd,
        )
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
        self.set_kubelet_config()  # kube-system/kubelet-config; World.add_cluster sets its fields

    def set_api_server_port(self, port: int) -> None:
        """The kube-apiservers' `--secure-port` (kubeadm's `localAPIEndpoint.bindPort`): their
        mirror pods say so, and a controlPlaneEndpoint without a port means this port, in
        cluster-info (re-signed) and for joining hosts, as kubeadm's `GetControlPlaneEndpoint`."""
        with self.lock:
            self.api_server_port = port
            for name in self.control_plane_nodes():
                host = self.host_of(name)
                if host is not None:
                    static_pods.add_control_plane_pods(self, host, ready=host.kubelet_running)
            self.set_cluster_info_cas([])

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
        with self.flow_control.admitted(req) as refused:  # a fault's latency holds the seat
            return refused or self._serve_admitted(req)

    def _serve_admitted(self, req: Request) -> Response:
        target = req.path + ("?" + urlencode(req.query) if req.query else "")
        latency, error, compact = self.faults.decide(req.method, target)
        if latency:
            time.sleep(latency)
        if compact:
            self.store.compact()
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
        self, predicate: Callable[[list[RequestRecord]], bool], timeout: float = 60.0
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

    # ---- behaviours --------------------------------------------------------------------
    def _on_change(self, change: Change) -> None:
        self.world.behaviours.changed(self, change)
        self.world.notify()

    def __repr__(self) -> str:
        return f"<Cluster {self.name} {self.version} {self.server}>"


def temp_dir() -> str:
    return tempfile.mkdtemp(prefix="kubesim-")
