"""What kubeadm leaves in a cluster: its ConfigMaps, and the parsing of join configurations."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any

import yaml

from kubesim import yamltext
from kubesim.objects import parse_version

KUBEADM_GROUP = "kubeadm.k8s.io"
JOIN_API_VERSIONS = ("kubeadm.k8s.io/v1beta3", "kubeadm.k8s.io/v1beta4")


def kubeadm_api_version(version: str) -> str:
    return (
        "kubeadm.k8s.io/v1beta4"
        if parse_version(version)[:2] >= (1, 31)
        else "kubeadm.k8s.io/v1beta3"
    )


DEFAULT_POD_SUBNET = "10.244.0.0/16"
# kubeadm's ClusterConfiguration etcd.external, as an HA guide's external etcd writes it
EXTERNAL_ETCD = {
    "endpoints": [
        "https://10.200.0.11:2379",
        "https://10.200.0.12:2379",
        "https://10.200.0.13:2379",
    ],
    "caFile": "/etc/kubernetes/pki/etcd/ca.crt",
    "certFile": "/etc/kubernetes/pki/apiserver-etcd-client.crt",
    "keyFile": "/etc/kubernetes/pki/apiserver-etcd-client.key",
}


def cluster_configuration(
    name: str,
    version: str,
    control_plane_endpoint: str,
    pod_subnet: str = DEFAULT_POD_SUBNET,
    node_cidr_mask_size: int = 24,
    external_etcd: bool = False,
) -> str:
    doc: dict[str, Any] = {
        "apiServer": {},
        "apiVersion": kubeadm_api_version(version),
        "certificatesDir": "/etc/kubernetes/pki",
        "clusterName": name,
        "controlPlaneEndpoint": control_plane_endpoint,
        "controllerManager": {},
        "dns": {},
        "etcd": {"local": {"dataDir": "/var/lib/etcd"}},
        "imageRepository": "registry.k8s.io",
        "kind": "ClusterConfiguration",
        "kubernetesVersion": version,
        "networking": {
            "dnsDomain": "cluster.local",
            "serviceSubnet": "10.96.0.0/12",
        },
        "proxy": {},
        "scheduler": {},
    }
    if pod_subnet:
        doc["networking"]["podSubnet"] = pod_subnet
    if external_etcd:
        doc["etcd"] = {"external": EXTERNAL_ETCD}
    v1beta4 = doc["apiVersion"].endswith("v1beta4")
    if node_cidr_mask_size != 24:
        flag = "node-cidr-mask-size-ipv4" if "," in pod_subnet else "node-cidr-mask-size"
        doc["controllerManager"]["extraArgs"] = _extra_args_doc(
            {flag: str(node_cidr_mask_size)}, v1beta4
        )
    if v1beta4:
        doc.update(
            caCertificateValidityPeriod="87600h0m0s",
            certificateValidityPeriod="8760h0m0s",
            encryptionAlgorithm="ECDSA-P256",
        )
    text: str = yaml.safe_dump(doc, default_flow_style=False, sort_keys=True)
    return text


def _extra_args_doc(args: dict[str, str], v1beta4: bool) -> Any:
    """v1beta4 writes extraArgs as a list of {name, value}; v1beta3 as a map."""
    if v1beta4:
        return [{"name": k, "value": v} for k, v in args.items()]
    return dict(args)


def normalise_endpoint(endpoint: str, default_port: int = 6443) -> tuple[str, int] | None:
    """``host[:port]`` (IPv6 literals in brackets) to (lower-case host, port); None if malformed."""
    text = endpoint.strip()
    for prefix in ("https://", "http://"):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    text = text.rstrip("/")
    if not text:
        return None
    if text.startswith("["):
        close = text.find("]")
        if close < 0:
            return None
        host, rest = text[1:close], text[close + 1 :]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return None
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else ""
    elif text.count(":") > 1:
        return None  # a bare IPv6 literal with a port is ambiguous
    else:
        host, _, port_text = text.partition(":")
    try:
        port = int(port_text) if port_text else default_port
    except ValueError:
        return None
    if not host or not 0 < port < 65536:
        return None
    return host.lower(), port


@dataclass
class JoinConfig:
    api_version: str
    endpoint: str
    token: str
    ca_cert_hashes: list[str]
    unsafe_skip_ca_verification: bool
    node_name: str
    control_plane: bool
    certificate_key: str
    kubelet_extra_args: dict[str, str] = field(default_factory=dict)
    cri_socket: str = ""
    taints: list[dict[str, Any]] | None = None  # nodeRegistration.taints (None: kubeadm's own)
    bind_port: int = 6443


def find_join_configuration(text: str) -> JoinConfig | None:
    """The JoinConfiguration in a (possibly multi-document) YAML file, if any."""
    try:
        docs = yamltext.load_all(text)
    except yaml.YAMLError:
        return None
    for doc in docs:
        if (
            isinstance(doc, dict)
            and doc.get("kind") == "JoinConfiguration"
            and doc.get("apiVersion") in JOIN_API_VERSIONS
        ):
            return _join_config(doc)
    return None


def _join_config(doc: dict[str, Any]) -> JoinConfig:
    discovery = doc.get("discovery") or {}
    token = discovery.get("bootstrapToken") or {}
    registration = doc.get("nodeRegistration") or {}
    control_plane = doc.get("controlPlane")
    return JoinConfig(
        api_version=str(doc.get("apiVersion")),
        endpoint=str(token.get("apiServerEndpoint") or ""),
        token=str(token.get("token") or discovery.get("tlsBootstrapToken") or ""),
        ca_cert_hashes=[str(h) for h in token.get("caCertHashes") or []],
        unsafe_skip_ca_verification=bool(token.get("unsafeSkipCAVerification")),
        node_name=str(registration.get("name") or ""),
        control_plane=control_plane is not None,
        certificate_key=str((control_plane or {}).get("certificateKey") or ""),
        kubelet_extra_args=_extra_args(registration.get("kubeletExtraArgs")),
        cri_socket=str(registration.get("criSocket") or ""),
        taints=registration.get("taints") if isinstance(registration.get("taints"), list) else None,
        bind_port=int(
            ((control_plane or {}).get("localAPIEndpoint") or {}).get("bindPort") or 6443
        ),
    )


def _extra_args(value: Any) -> dict[str, str]:
    """v1beta4: a list of {name, value}; v1beta3: a map."""
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    if isinstance(value, list):
        return {
            str(arg.get("name")): str(arg.get("value", ""))
            for arg in value
            if isinstance(arg, dict) and arg.get("name")
        }
    return {}
