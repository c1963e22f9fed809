"""What `kubeadm join` checks before a host registers in the target cluster: discovery
(signed cluster-info, CA pins), version skew, node name, control-plane certificates and
TLS bootstrap, with kubeadm's own reasons."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubesim.behaviours.agent_pods import CERTS_SECRET, cluster_info_ca_hashes
from kubesim.behaviours.signer import JWS_PREFIX, TOKEN_PREFIX, TOKEN_RE, expired, token_fields
from kubesim.jws import verify_detached
from kubesim.kubeadm import JoinConfig, normalise_endpoint
from kubesim.node_objects import node_state
from kubesim.objects import parse_version
from kubesim.resources import CONFIGMAPS, NODES, SECRETS

if TYPE_CHECKING:
    from kubesim.hosts import Host
    from kubesim.protocols import SimCluster, SimWorld


@dataclass
class JoinAttempt:
    host: Host
    source: str
    config: JoinConfig
    profile: str  # kubeadm or ock
    cleanup: list[str]  # what the unit removes between reset and join
    unit: str = ""  # the unit's command (profile kubeadm), for the interfaces it deletes
    back: Any = None  # the unit's way back into the source (host_return.WayBack), if any


def check(world: SimWorld, attempt: JoinAttempt) -> tuple[SimCluster | None, str]:
    """(target, "") when the join would succeed, else (None, why)."""
    cfg, host = attempt.config, attempt.host
    parsed = normalise_endpoint(cfg.endpoint)
    if parsed is None:
        return None, f"discovery: invalid apiServerEndpoint {cfg.endpoint!r}"
    target = world.cluster_at(*parsed)
    if target is None or not target.reachable:
        return None, (
            f"couldn't get cluster-info from https://{cfg.endpoint}: dial tcp "
            f"{cfg.endpoint}: connect: connection refused"
        )
    with target.lock:
        reason = (
            _check_discovery(target, cfg)
            or _check_runtime(cfg, host)
            or _check_ports(cfg, host)
            or _check_version(target, cfg, host)
            or _check_name(target, cfg, host)
            or (_check_control_plane(target, cfg, world.clock.time()) if cfg.control_plane else "")
            or _check_tls_bootstrap(target, cfg, world.clock.time())
        )
    return (None, reason) if reason else (target, "")


def _check_discovery(target: SimCluster, cfg: JoinConfig) -> str:
    match = TOKEN_RE.match(cfg.token)
    if match is None:
        return (
            f"the bootstrap token {cfg.token!r} was not of the form "
            "'^([a-z0-9]{6})\\.([a-z0-9]{16})$'"
        )
    token_id, token_secret = match.groups()
    info = target.store.get(CONFIGMAPS, "kube-public", "cluster-info")
    data = (info.obj.get("data") or {}) if info else {}
    signature = data.get(JWS_PREFIX + token_id)
    if signature is None:
        return (
            f"there is no JWS signed token in the cluster-info ConfigMap. This token id "
            f'"{token_id}" is invalid for this cluster, can\'t connect'
        )
    if not verify_detached(data.get("kubeconfig", ""), signature, token_id, token_secret):
        return (
            "failed to verify JWS signature of received cluster info object, can't trust "
            "this API Server"
        )
    if cfg.unsafe_skip_ca_verification:
        return ""
    if not cfg.ca_cert_hashes:
        return "discovery: neither caCertHashes nor unsafeSkipCAVerification are set"
    found = cluster_info_ca_hashes(data.get("kubeconfig", ""))
    if not any(h in cfg.ca_cert_hashes for h in found):  # kubeadm: pubKeyPins.CheckAny
        return (
            "cluster CA found in cluster-info ConfigMap is invalid: none of the public keys "
            f'"{", ".join(found)}" are pinned'
        )
    return ""


def _check_runtime(cfg: JoinConfig, host: Host) -> str:
    """kubeadm picks the CRI socket itself only when the host has one; the kubelet refuses a
    node-ip that is not on the host (and the node never turns Ready)."""
    if not cfg.cri_socket and len(host.runtime_sockets) > 1:
        return (
            "found multiple CRI endpoints on the host. Please define which one do you wish to "
            "use by setting the 'criSocket' field in the kubeadm configuration file: "
            + ", ".join(host.runtime_sockets)
        )
    node_ip = cfg.kubelet_extra_args.get("node-ip", "").split(",")[0].strip()
    if node_ip and node_ip not in host.addresses:
        return (
            f'kubelet: failed to validate nodeIP: node IP: "{node_ip}" not found in the '
            "host's network interfaces"
        )
    return ""


def _check_ports(cfg: JoinConfig, host: Host) -> str:
    """kubeadm's join preflight, after the reset: a port of the joining control plane still
    held (nginx of a VIP layout left running) is fatal (cmd/kubeadm/app/preflight/checks.go,
    PortOpenCheck: "Port N is in use")."""
    if not cfg.control_plane:
        return ""
    held = host.held_ports()
    if cfg.bind_port in held:
        return (
            "[preflight] Some fatal errors occurred: "
            f"[ERROR Port-{cfg.bind_port}]: Port {cfg.bind_port} is in use"
        )
    return ""


def _check_version(target: SimCluster, cfg: JoinConfig, host: Host) -> str:
    kubelet = parse_version(host.kubelet_version)
    control_plane = parse_version(target.version)
    if cfg.api_version.endswith("v1beta4") and kubelet[:2] < (1, 31):
        return (
            f"kubeadm {host.kubelet_version} cannot read the configuration: no kind "
            f'"JoinConfiguration" is registered for version "{cfg.api_version}"'
        )
    if kubelet[:2] > control_plane[:2]:
        return (
            "the kubelet version is higher than the control plane version. This is not a "
            f"supported version skew and may lead to a malfunctional cluster. Kubelet "
            f'version: "{host.kubelet_version}" Control plane version: "{target.version}"'
        )
    return ""


def _check_name(target: SimCluster, cfg: JoinConfig, host: Host) -> str:
    name = cfg.node_name or host.name
    if name != host.name:
        return (
            f"nodeRegistration.name {name!r} is not this host's node name {host.name!r}: "
            "the node would register under another name"
        )
    existing = target.store.get(NODES, "", name)
    if existing is not None and node_state(existing.obj) == "ready":
        return (
            f'a Node with name "{name}" and status "Ready" already exists in the cluster. '
            "You must delete the existing Node or change the name of this new joining Node"
        )
    return ""


def _check_control_plane(target: SimCluster, cfg: JoinConfig, now: float) -> str:
    if not target.control_plane_endpoint:
        return (
            "unable to add a new control plane instance to a cluster that doesn't have a "
            "stable controlPlaneEndpoint address"
        )
    if target.store.get(SECRETS, "kube-system", CERTS_SECRET) is None:
        return (
            "error downloading certs: error downloading the secret: secrets "
            '"kubeadm-certs" not found'
        )
    expiry = target.uploaded_cert_keys.get(cfg.certificate_key.lower())
    if expiry is None or expiry <= now:
        return (
            "error downloading certs: error decoding secret data with provided key: "
            "cipher: message authentication failed"
        )
    if target.external_etcd and not target.uploaded_external_etcd_certs:
        # kubeadm's copycerts: etcd.external in the joining config wants its client certs
        return (
            "error downloading certs: the Secret does not include the required certificate "
            "or key - name: external-etcd.crt, path: "
            "/etc/kubernetes/pki/apiserver-etcd-client.crt (external etcd: upload-certs ran "
            "without the cluster's kubeadm configuration)"
        )
    return ""


def _check_tls_bootstrap(target: SimCluster, cfg: JoinConfig, now: float) -> str:
    match = TOKEN_RE.match(cfg.token)
    assert match is not None
    token_id, token_secret = match.groups()
    secret = target.store.get(SECRETS, "kube-system", TOKEN_PREFIX + token_id)
    values = token_fields(secret.obj) if secret else None
    unauthorized = "error execution phase kubelet-start: TLS bootstrap failed: Unauthorized"
    if values is None:
        return f"{unauthorized} (no bootstrap token {token_id} in the target)"
    if values.get("token-secret") != token_secret:
        return f"{unauthorized} (token secret does not match)"
    if expired(values, now):
        return f"{unauthorized} (token {token_id} expired)"
    if values.get("usage-bootstrap-authentication") != "true":
        return f"{unauthorized} (token {token_id} is not usable for authentication)"
    return ""
