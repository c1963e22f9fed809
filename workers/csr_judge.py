"""Is a CertificateSigningRequest the moved node's own kubelet serving certificate request?

Pure functions over what the official client read. A request is the node's only if it was filed
by the node (`spec.username` `system:node:<node>`), asks the kubelet-serving signer, carries a
PEM request whose signature checks, with subject CN `system:node:<node>` and O `system:nodes`,
only DNS and IP SANs, each of them one of the node's `status.addresses` in the target, and the
usages a kubelet asks (pkg/kubelet/certificate/kubelet.go; the signer's own check is
pkg/apis/certificates/helpers.go `ValidateKubeletServingCSR`). Anything else could be a
certificate for someone else's name, signed by the cluster CA: it is left alone, and why says so.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cryptography import x509
from cryptography.x509.oid import NameOID

from joinops.requests import step_texts

SERVING_SIGNER = "kubernetes.io/kubelet-serving"
NODE_PREFIX = "system:node:"
NODE_ORGANIZATION = "system:nodes"
SERVING_USAGES = (
    frozenset({"digital signature", "key encipherment", "server auth"}),
    frozenset({"digital signature", "server auth"}),  # ECDSA and Ed25519 keys
)
_DNS_ADDRESSES = ("Hostname", "InternalDNS", "ExternalDNS")
_IP_ADDRESSES = ("InternalIP", "ExternalIP")


@dataclass(frozen=True)
class NodeIdentity:
    """The node as the target sees it: its name, its addresses, when its Node was created."""

    name: str
    dns: frozenset[str]
    ips: frozenset[str]  # normalised (ipaddress) text
    since: datetime | None

    @property
    def username(self) -> str:
        return NODE_PREFIX + self.name


@dataclass(frozen=True)
class Csr:
    name: str
    username: str
    signer: str
    usages: tuple[str, ...]
    request: x509.CertificateSigningRequest | None  # None: not a PEM request that verifies
    conditions: frozenset[str]  # the types of its True conditions
    issued: bool
    created: datetime | None

    @property
    def pending(self) -> bool:
        return not self.issued and not self.conditions & {"Approved", "Denied", "Failed"}

    @property
    def approved(self) -> bool:
        return "Approved" in self.conditions and "Failed" not in self.conditions


def node_identity(node: Any) -> NodeIdentity:
    addresses = (node.status.addresses or []) if node.status else []
    return NodeIdentity(
        name=node.metadata.name,
        dns=frozenset(a.address for a in addresses if a.type in _DNS_ADDRESSES),
        ips=frozenset(_ip(a.address) for a in addresses if a.type in _IP_ADDRESSES),
        since=node.metadata.creation_timestamp,
    )


def read_csr(csr: Any) -> Csr:
    status = csr.status
    conditions = (status.conditions or []) if status else []
    return Csr(
        name=csr.metadata.name,
        username=csr.spec.username or "",
        signer=csr.spec.signer_name or "",
        usages=tuple(csr.spec.usages or ()),
        request=_request(csr.spec.request),
        conditions=frozenset(c.type for c in conditions if c.status == "True"),
        issued=bool(status and status.certificate),
        created=csr.metadata.creation_timestamp,
    )


def concerns(csr: Csr, node: str) -> bool:
    """Filed by the node, or claiming its name: worth a word if it is left alone."""
    return csr.signer == SERVING_SIGNER and (
        csr.username == NODE_PREFIX + node or _common_name(csr) == NODE_PREFIX + node
    )


def refusal(csr: Csr, node: NodeIdentity) -> str | None:
    """Why `csr` is not the node's own serving certificate request; None when it is."""
    if csr.username != node.username:
        return step_texts.csr_not_from_node(csr.username, node.name)
    if csr.request is None:
        return step_texts.csr_unreadable()
    subject = csr.request.subject
    organizations = [a.value for a in subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    if _common_name(csr) != node.username or organizations != [NODE_ORGANIZATION]:
        return step_texts.csr_wrong_subject(subject.rfc4514_string(), node.name)
    return _san_refusal(csr.request, node) or _usage_refusal(csr)


def is_the_nodes(csr: Csr, node: NodeIdentity) -> bool:
    return csr.signer == SERVING_SIGNER and refusal(csr, node) is None


def _san_refusal(request: x509.CertificateSigningRequest, node: NodeIdentity) -> str | None:
    try:
        sans = request.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return step_texts.csr_no_san()
    for kind, label in (
        (x509.RFC822Name, "email"),
        (x509.UniformResourceIdentifier, "URI"),
        (x509.DirectoryName, "directory name"),
        (x509.OtherName, "other-name"),
        (x509.RegisteredID, "registered-ID"),
    ):
        if sans.get_values_for_type(kind):
            return step_texts.csr_forbidden_san(label)
    dns = sans.get_values_for_type(x509.DNSName)
    ips = [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)]
    if not dns and not ips:
        return step_texts.csr_no_san()
    for name in dns:
        if name not in node.dns:
            return step_texts.csr_foreign_san(name, node.name)
    for ip in ips:
        if _ip(ip) not in node.ips:
            return step_texts.csr_foreign_san(ip, node.name)
    return None


def _usage_refusal(csr: Csr) -> str | None:
    if frozenset(csr.usages) in SERVING_USAGES:
        return None
    return step_texts.csr_wrong_usages(list(csr.usages))


def _common_name(csr: Csr) -> str:
    if csr.request is None:
        return ""
    names = csr.request.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(names[0].value) if len(names) == 1 else ""


def _request(data: str | bytes | None) -> x509.CertificateSigningRequest | None:
    """`spec.request` as the client hands it: base64 text (or bytes) of a PEM block."""
    if not data:
        return None
    try:
        pem = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        pem = data.encode() if isinstance(data, str) else data  # already decoded
    try:
        request = x509.load_pem_x509_csr(pem)
    except ValueError:
        return None
    return request if request.is_signature_valid else None


def _ip(text: str) -> str:
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return text
