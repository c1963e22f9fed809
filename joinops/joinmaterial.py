"""Join material: what a host needs to join a kubeadm cluster (shared by migrations and Ignition).

Pure functions only; creating the material in a cluster is the engine's job. See
shared/docs/migration.md, "Join material on the target".
"""

from __future__ import annotations

import hashlib
import ipaddress
import secrets
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from joinops.requests.model import Version

DEFAULT_API_PORT = 6443
TOKEN_ALPHABET = string.ascii_lowercase + string.digits
TOKEN_GROUP = "system:bootstrappers:kubeadm:default-node-token"
KUBEADM_CERTS_LIFETIME = timedelta(hours=2)


@dataclass(frozen=True)
class BootstrapToken:
    id: str  # 6 characters, public (names the Secret)
    secret: str  # 16 characters, the credential

    @property
    def value(self) -> str:
        return f"{self.id}.{self.secret}"

    @property
    def secret_name(self) -> str:
        return f"bootstrap-token-{self.id}"

    def __repr__(self) -> str:  # never print the secret half
        return f"BootstrapToken(id={self.id!r}, secret=<redacted>)"


def new_bootstrap_token() -> BootstrapToken:
    pick = lambda n: "".join(secrets.choice(TOKEN_ALPHABET) for _ in range(n))  # noqa: E731
    return BootstrapToken(pick(6), pick(16))


def new_certificate_key() -> str:
    """32 random bytes, hex: what `kubeadm certs certificate-key` prints."""
    return secrets.token_hex(32)


def token_secret(
    token: BootstrapToken, expires: datetime, description: str, labels: dict[str, str]
) -> dict[str, Any]:
    """The kube-system Secret kubeadm itself would write for `kubeadm token create`."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "bootstrap.kubernetes.io/token",
        "metadata": {"name": token.secret_name, "namespace": "kube-system", "labels": labels},
        "stringData": {
            "description": description,
            "token-id": token.id,
            "token-secret": token.secret,
            "expiration": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "usage-bootstrap-authentication": "true",
            "usage-bootstrap-signing": "true",
            "auth-extra-groups": TOKEN_GROUP,
        },
    }


def ca_cert_hash(ca_pem: bytes) -> str:
    """`sha256:` + hex SHA-256 of the DER SubjectPublicKeyInfo of the CA certificate."""
    cert = x509.load_pem_x509_certificate(ca_pem)
    spki = cert.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    return "sha256:" + hashlib.sha256(spki).hexdigest()


def join_endpoint(
    control_plane_endpoint: str, server_url: str, bind_port: int = DEFAULT_API_PORT
) -> str:
    """`host:port` to join: the shared endpoint if the cluster has one, else its API server.

    As kubeadm's `GetControlPlaneEndpoint` (cmd/kubeadm/app/util/endpoint.go): an endpoint
    without a port takes the API server's `bindPort` (its `--secure-port`), not 6443."""
    if control_plane_endpoint:
        return normalise_endpoint(control_plane_endpoint, bind_port)
    return normalise_endpoint(urlsplit(server_url).netloc or server_url, bind_port)


def normalise_endpoint(endpoint: str, default_port: int = DEFAULT_API_PORT) -> str:
    """Host and port, IPv6 literals bracketed, `default_port` when none is given."""
    text = endpoint.strip()
    if "://" in text:
        text = urlsplit(text).netloc
    host, port = _split_host_port(text, default_port)
    if not host:
        raise ValueError(f"no host in endpoint {endpoint!r}")
    try:
        if ipaddress.ip_address(host).version == 6:
            host = f"[{host}]"
    except ValueError:
        pass
    return f"{host}:{port}"


def split_endpoint_host(endpoint: str) -> str:
    """The host of an endpoint (`host[:port]`, `[v6]:port`, a URL); "" when it has none."""
    text = endpoint.strip()
    if "://" in text:
        text = urlsplit(text).netloc
    try:
        return _split_host_port(text, DEFAULT_API_PORT)[0]
    except ValueError:
        return ""


def _split_host_port(text: str, default_port: int) -> tuple[str, int]:
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest.removeprefix(":")
    elif text.count(":") > 1:  # a bare IPv6 literal has no port
        host, port = text, ""
    else:
        host, _, port = text.partition(":")
    if port and not (port.isdigit() and 0 < int(port) < 65536):
        raise ValueError(f"bad port in endpoint {text!r}")
    return host, int(port) if port else default_port


def kubeadm_token_ttl(ttl: timedelta) -> str:
    """A duration as `kubeadm token create --ttl` takes it (Go's form): `2h0m0s`."""
    total = int(ttl.total_seconds())
    hours, rest = divmod(total, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}h{minutes}m{seconds}s"


def kubeadm_api_version(kubeadm: Version) -> str:
    """The config API that kubeadm reads: v1beta4 from 1.31 on, v1beta3 before."""
    return (
        "kubeadm.k8s.io/v1beta4"
        if (kubeadm.major, kubeadm.minor) >= (1, 31)
        else ("kubeadm.k8s.io/v1beta3")
    )


CONTROL_PLANE_TAINT = "node-role.kubernetes.io/control-plane"


def join_configuration(
    *,
    kubeadm_version: Version,
    endpoint: str,
    token: BootstrapToken,
    ca_hashes: Sequence[str],
    node_name: str | None,
    certificate_key: str | None = None,
    advertise_address: str | None = None,
    bind_port: int = DEFAULT_API_PORT,
    kubelet_args: Mapping[str, str] | None = None,
    cri_socket: str = "",
    taints: Sequence[Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    """A kubeadm JoinConfiguration; `certificate_key` makes it a control-plane join.

    `ca_hashes`: one pin per CA certificate the node will find in the target's cluster-info.
    `kubeadm_version` is the version of the kubeadm that will read it: the joining host's own
    (kubeadm 1.30 cannot read v1beta4), not the target's.

    `node_name=None` leaves `nodeRegistration.name` out: a fresh host registers under its
    hostname (what an Ignition file for any number of new hosts needs).

    `kubelet_args` and `cri_socket`: the node's own kubelet flags (`--node-ip`,
    `--cloud-provider` ...) and runtime socket, which `kubeadm reset` deletes with
    /var/lib/kubelet/kubeadm-flags.env; kubeadm writes them back from here.
    """
    config: dict[str, Any] = {
        "apiVersion": kubeadm_api_version(kubeadm_version),
        "kind": "JoinConfiguration",
        "discovery": {
            "bootstrapToken": {
                "apiServerEndpoint": endpoint,
                "token": token.value,
                "caCertHashes": list(ca_hashes),
            },
        },
    }
    registration: dict[str, Any] = {}
    if node_name is not None:
        registration["name"] = node_name
    if cri_socket:
        registration["criSocket"] = cri_socket
    if kubelet_args:
        registration["kubeletExtraArgs"] = _extra_args(config["apiVersion"], kubelet_args)
    if taints is not None:  # replaces kubeadm's defaults: a control plane keeps its own
        own = [dict(t) for t in taints]
        if certificate_key is not None and not any(
            t.get("key") == CONTROL_PLANE_TAINT for t in own
        ):
            own.append({"key": CONTROL_PLANE_TAINT, "effect": "NoSchedule"})
        registration["taints"] = own
    if registration:
        config["nodeRegistration"] = registration
    if certificate_key is not None:
        local: dict[str, Any] = {"bindPort": bind_port}
        if advertise_address:
            local["advertiseAddress"] = advertise_address
        config["controlPlane"] = {"certificateKey": certificate_key, "localAPIEndpoint": local}
    return config


def _extra_args(api_version: str, args: Mapping[str, str]) -> Any:
    """v1beta4 takes a list of name/value pairs; v1beta3 a map."""
    if api_version.endswith("v1beta3"):
        return dict(args)
    return [{"name": name, "value": value} for name, value in args.items()]
