"""Preparing an Ignition for a new host: reads the cluster only, creates nothing.

`prepare(cluster, ask)` reads the facts, CA hash and control planes, mints the token and
certificate key locally, builds the Ignition and validates it, so every problem with the input
surfaces before the cluster is touched. `workers.ignition.create` then creates the material;
`workers.ignition.job` runs both for a request from Slack.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from joinops.clusters import capins
from joinops.clusters.kube import KubeCluster
from joinops.errors import UsageError
from joinops.ignition import texts
from joinops.ignition.byo_resolve import ResolvedByo
from joinops.ignition.config import (
    JOIN_UNIT,
    KUBEADM_CONF,
    IgnitionInputs,
    build_ignition,
    render,
    sha256,
)
from joinops.ignition.validate import problems as ignition_problems
from joinops.joinmaterial import (
    DEFAULT_API_PORT,
    BootstrapToken,
    join_configuration,
    new_bootstrap_token,
    new_certificate_key,
)
from joinops.requests.model import CONTROL_PLANE_LABEL, ClusterFacts, Role, Version
from workers.errors import PermanentError


class Refused(PermanentError):
    """A rule says no (the CLI exits 1): nothing was created."""


@dataclass(frozen=True)
class IgnitionAsk:
    cluster: str
    role: Role
    ttl: timedelta
    byo: ResolvedByo | None = None


@dataclass
class Prepared:
    """A built, validated file and the material it needs (not yet created)."""

    ask: IgnitionAsk
    facts: ClusterFacts
    endpoint: str
    token: BootstrapToken
    certificate_key: str | None
    upload_host: str  # a Ready control plane (the upload runs there; named in the commands)
    data: bytes
    sha256: str
    overridden: list[str]
    notes: list[str] = field(default_factory=list)

    @property
    def control_plane(self) -> bool:
        return self.certificate_key is not None


def _cluster_info(cluster: KubeCluster) -> capins.ClusterInfo:
    """The CA pins and server a new host will see (kube-public/cluster-info)."""
    try:
        return capins.read(cluster)
    except capins.ClusterInfoProblem as e:
        raise Refused(str(e)) from e


def prepare(cluster: KubeCluster, ask: IgnitionAsk) -> Prepared:
    """Read the cluster, mint the secrets locally, build and validate the file."""
    facts = cluster.facts()
    control_plane = ask.role is Role.CONTROL_PLANE
    if control_plane and not facts.control_plane_endpoint:
        raise Refused(texts.no_control_plane_endpoint(cluster.name))
    _check_version(ask.byo, facts.version)
    ready = [cp.name for cp in facts.control_planes if cp.ready]
    if control_plane and not ready:
        raise Refused(texts.no_ready_control_plane(cluster.name))
    info = _cluster_info(cluster)
    # an endpoint without a port takes the API server's bind port, as kubeadm's does
    endpoint = info.endpoint(
        facts.control_plane_endpoint, cluster.api_server_port() or DEFAULT_API_PORT
    )
    token = new_bootstrap_token()
    certificate_key = new_certificate_key() if control_plane else None
    byo = ask.byo.config if ask.byo else None
    bind_port = byo.control_plane_bind_port() if byo else DEFAULT_API_PORT
    join_config = join_configuration(
        kubeadm_version=reader_version(ask.byo, facts.version),
        endpoint=endpoint,
        token=token,
        ca_hashes=info.ca_hashes,
        node_name=None,
        certificate_key=certificate_key,
        bind_port=bind_port,
    )
    networking = cluster.kubeadm_cluster_configuration().get("networking") or {}
    addresses: tuple[str, ...] = ()
    if control_plane and byo is not None and byo.virtual_ip:
        addresses = control_plane_addresses(cluster)
    inputs = IgnitionInputs(
        cluster=cluster.name,
        role=ask.role,
        join_config=join_config,
        endpoint=endpoint,
        target_minor=f"{facts.version.major}.{facts.version.minor}",
        byo=ask.byo,
        control_plane_addresses=addresses,
        service_subnet=str(networking.get("serviceSubnet") or ""),
        pod_subnet=str(networking.get("podSubnet") or ""),
    )
    built = build_ignition(inputs)
    found = ignition_problems(built.config)
    if found:
        # Only extra Ignition can break a file joinops builds: it is the operator's input.
        raise UsageError(
            "\n".join(f"the Ignition after merging extra Ignition: {p}" for p in found)
        )
    data = render(built.config)
    notes = _notes(ask, endpoint, built.overridden, bind_port)
    return Prepared(
        ask=ask,
        facts=facts,
        endpoint=endpoint,
        token=token,
        certificate_key=certificate_key,
        upload_host=ready[0] if ready else "",
        data=data,
        sha256=sha256(data),
        overridden=built.overridden,
        notes=notes,
    )


def control_plane_addresses(cluster: KubeCluster) -> tuple[str, ...]:
    """The InternalIP of every control plane (for the virtual IP's peers and nginx upstreams)."""
    nodes = cluster.call(
        "list", "nodes", cluster.core.list_node, label_selector=CONTROL_PLANE_LABEL
    )
    found = []
    for node in nodes.items:
        for address in node.status.addresses or []:
            if address.type == "InternalIP" and address.address:
                found.append(address.address)
                break
    return tuple(sorted(found))


def reader_version(byo: ResolvedByo | None, target: Version) -> Version:
    """The oldest kubeadm that may read the file: the byo.yaml's kubernetesVersion, else the
    oldest a new host may run (one minor below the cluster). So a 1.30 host joining a 1.31
    cluster gets a v1beta3 JoinConfiguration, which every kubeadm from 1.30 on reads."""
    if byo is not None and byo.config.kubernetes_version:
        return Version.parse(byo.config.kubernetes_version)
    return Version(target.major, max(target.minor - 1, 0), 0)


def _check_version(byo: ResolvedByo | None, target: Version) -> None:
    if byo is None or not byo.config.kubernetes_version:
        return
    wanted = Version.parse(byo.config.kubernetes_version)
    older = Version(target.major, target.minor - 1, 0)
    if wanted.major != target.major or wanted.minor not in (target.minor, target.minor - 1):
        raise Refused(
            texts.version_skew(
                wanted.minor_line, str(target), f"{target.minor_line}.x or {older.minor_line}.x"
            )
        )


def _notes(ask: IgnitionAsk, endpoint: str, overridden: list[str], bind_port: int) -> list[str]:
    notes = []
    if ask.byo is not None:
        cfg = ask.byo.config
        key = "virtualIp" if cfg.virtual_ip else "loadBalancer"
        host = endpoint.rsplit(":", 1)[0].strip("[]")
        if cfg.api_host and cfg.api_host.lower() != host.lower():
            notes.append(texts.endpoint_differs(cfg.api_host, key, endpoint))
    elif ask.role is Role.CONTROL_PLANE:
        notes.append(texts.no_byo_control_plane(bind_port))
    if overridden:
        notes.append(texts.extra_overrides(overridden))
        for item in (f"file {KUBEADM_CONF}", f"unit {JOIN_UNIT}"):
            if item in overridden:
                notes.append(texts.extra_replaces_join(item))
    return notes
