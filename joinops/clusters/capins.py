"""The CA pins and the endpoint a joining node will really see: from `kube-public/cluster-info`.

`kubeadm join` fetches cluster-info from the endpoint, checks its JWS signature for the token
(`jws-kubeconfig-<token-id>`, HS256 with the token's secret as key), and then checks the CA
certificates in it against `caCertHashes`. joinops's own kubeconfig may reach the cluster through
a proxy or a TLS-terminating load balancer, or carry a CA bundle: its CA is not necessarily what
the node will be shown. So the pins are taken from cluster-info itself, one for *every* CA in it
(a bundle during a CA rotation), and the endpoint is `controlPlaneEndpoint` or else the server in
cluster-info's kubeconfig.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any

import yaml
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

from joinops import yamltext
from joinops.clusters.kube import KubeCluster
from joinops.errors import ClusterNotFound
from joinops.joinmaterial import DEFAULT_API_PORT, BootstrapToken, ca_cert_hash, join_endpoint
from joinops.requests import step_texts

NAMESPACE = "kube-public"
NAME = "cluster-info"
JWS_PREFIX = "jws-kubeconfig-"


class ClusterInfoProblem(Exception):
    """cluster-info is missing or unusable; the text says so for the operator."""


@dataclass(frozen=True)
class ClusterInfo:
    kubeconfig: str  # the signed text, exactly as stored
    server: str
    ca_pems: tuple[bytes, ...]
    signatures: dict[str, str]  # token id -> detached JWS

    @property
    def ca_hashes(self) -> list[str]:
        """A pin for every CA certificate in it, in order."""
        return [ca_cert_hash(pem) for pem in self.ca_pems]

    def endpoint(self, control_plane_endpoint: str, bind_port: int = DEFAULT_API_PORT) -> str:
        """`bind_port`: the target API server's, for an endpoint written without a port."""
        return join_endpoint(control_plane_endpoint, self.server, bind_port)

    def signed_for(self, token: BootstrapToken) -> bool:
        """Would a node holding `token` trust this cluster-info? (kubeadm's JWS check)"""
        signature = self.signatures.get(token.id)
        if signature is None:
            return False
        return hmac.compare_digest(signature, detached_jws(self.kubeconfig, token))


def read(target: KubeCluster) -> ClusterInfo:
    """Get and parse the target's cluster-info (one API call)."""
    try:
        cm = target.call(
            "get",
            f"configmaps/{NAME}",
            target.core.read_namespaced_config_map,
            NAME,
            NAMESPACE,
        )
    except ClusterNotFound as e:
        raise ClusterInfoProblem(step_texts.cluster_info_missing(target.name)) from e
    return parse(target.name, dict(cm.data or {}))


def parse(cluster: str, data: dict[str, str]) -> ClusterInfo:
    text = data.get("kubeconfig", "")
    if not text:
        raise ClusterInfoProblem(step_texts.cluster_info_unusable(cluster, "no `kubeconfig` key"))
    try:
        doc = yamltext.load(text)
        entry: dict[str, Any] = doc["clusters"][0]["cluster"]
        server = str(entry["server"])
        pems = split_pem_bundle(base64.b64decode(entry["certificate-authority-data"]))
    except (yaml.YAMLError, KeyError, IndexError, TypeError, binascii.Error, ValueError) as e:
        what = "its kubeconfig has no server and certificate-authority-data that parse"
        raise ClusterInfoProblem(step_texts.cluster_info_unusable(cluster, what)) from e
    signatures = {
        key.removeprefix(JWS_PREFIX): value
        for key, value in data.items()
        if key.startswith(JWS_PREFIX)
    }
    return ClusterInfo(text, server, tuple(pems), signatures)


def split_pem_bundle(data: bytes) -> list[bytes]:
    """Every certificate of a PEM bundle, each as PEM; ValueError when there is none."""
    certs = x509.load_pem_x509_certificates(data)
    return [cert.public_bytes(Encoding.PEM) for cert in certs]


def detached_jws(content: str, token: BootstrapToken) -> str:
    """`header..signature` (RFC 7515 appendix F) as the bootstrap signer makes it."""
    header = _b64url(json.dumps({"alg": "HS256", "kid": token.id}, separators=(",", ":")).encode())
    signing_input = f"{header}.{_b64url(content.encode())}".encode()
    mac = hmac.new(token.secret.encode(), signing_input, hashlib.sha256).digest()
    return f"{header}..{_b64url(mac)}"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")
