"""CertificateSigningRequests (certificates.k8s.io/v1) as the API server keeps them.

Read from: pkg/registry/certificates/certificates/strategy.go (the requester's identity replaces
``spec.username``/``groups``/``uid`` on create; a plain update changes neither spec nor status;
``/status`` keeps the spec and the Approved/Denied conditions; ``/approval`` takes only the
conditions), pkg/apis/certificates/validation (a PEM ``CERTIFICATE REQUEST`` whose signature
checks, a signerName, usages; Approved and Denied exclusive, both only with status True) and
pkg/apis/certificates/helpers.go ``ValidateKubeletServingCSR`` (what the kubelet-serving signer
accepts). The kubelet's own request: pkg/kubelet/certificate/kubelet.go.
"""

from __future__ import annotations

import base64
import ipaddress
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.oid import NameOID

from kubesim.errors import field_invalid, field_required, invalid

KUBELET_SERVING = "kubernetes.io/kubelet-serving"
KUBELET_CLIENT = "kubernetes.io/kube-apiserver-client-kubelet"
NODE_PREFIX = "system:node:"
NODE_GROUPS = ["system:nodes", "system:authenticated"]
SERVING_USAGES = ["digital signature", "key encipherment", "server auth"]
CLIENT_USAGES = ["digital signature", "key encipherment", "client auth"]
_SERVING_SETS = (
    {"digital signature", "key encipherment", "server auth"},
    {"digital signature", "server auth"},
)
_FINAL = ("Approved", "Denied")


# ---- what a requester sends -------------------------------------------------------------
def request_pem(
    common_name: str, organizations: list[str], dns: list[str], ips: list[str]
) -> bytes:
    """A PEM certificate request with a fresh ECDSA P-256 key, as the kubelet makes it."""
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    subject = x509.Name([*names, x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    builder = x509.CertificateSigningRequestBuilder().subject_name(subject)
    sans: list[x509.GeneralName] = [x509.DNSName(n) for n in dns]
    sans += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(key, hashes.SHA256()).public_bytes(Encoding.PEM)


def csr_object(
    name: str, pem: bytes, signer: str, username: str, groups: list[str], usages: list[str]
) -> dict[str, Any]:
    return {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {
            "request": base64.b64encode(pem).decode(),
            "signerName": signer,
            "usages": list(usages),
            "username": username,
            "groups": list(groups),
        },
        "status": {},
    }


def default_csr(obj: dict[str, Any], username: str) -> None:
    """On create the server records who asked, whatever the body says."""
    spec = obj.setdefault("spec", {})
    spec["username"] = username
    spec["groups"] = ["system:serviceaccounts", "system:authenticated"]
    spec.pop("uid", None)
    obj["status"] = {}


def parse_request(obj: dict[str, Any]) -> x509.CertificateSigningRequest | None:
    """The spec's PEM request, if it is one whose signature checks."""
    try:
        pem = base64.b64decode((obj.get("spec") or {}).get("request") or "")
        csr = x509.load_pem_x509_csr(pem)
    except ValueError:
        return None
    return csr if csr.is_signature_valid else None


def create_errors(obj: dict[str, Any]) -> list[dict[str, str]]:
    spec = obj.get("spec") or {}
    errors = []
    if parse_request(obj) is None:
        errors.append(
            field_invalid("spec.request", "", "PEM block type must be CERTIFICATE REQUEST")
        )
    if not spec.get("signerName"):
        errors.append(field_required("spec.signerName"))
    if not spec.get("usages"):
        errors.append(field_required("spec.usages"))
    return errors


# ---- conditions -------------------------------------------------------------------------
def has_condition(obj: dict[str, Any], kind: str) -> bool:
    return any(
        c.get("type") == kind and c.get("status") == "True"
        for c in (obj.get("status") or {}).get("conditions") or []
    )


def approval_update(current: dict[str, Any], sent: dict[str, Any], now: str) -> dict[str, Any]:
    """PUT .../approval: the stored object with the sent conditions (validated), nothing else."""
    new = dict(current)
    status = dict(current.get("status") or {})
    conditions = [dict(c) for c in (sent.get("status") or {}).get("conditions") or []]
    _check_conditions(current["metadata"]["name"], conditions)
    for condition in conditions:
        condition.setdefault("lastUpdateTime", now)
        condition.setdefault("lastTransitionTime", now)
    status["conditions"] = conditions
    new["status"] = status
    return new


def status_update(current: dict[str, Any], sent: dict[str, Any]) -> dict[str, Any]:
    """PUT .../status: the signer's certificate and conditions; approval stays as it was."""
    new = dict(current)
    status = dict(sent.get("status") or {})
    kept = [
        c for c in (current.get("status") or {}).get("conditions") or [] if c.get("type") in _FINAL
    ]
    others = [c for c in status.get("conditions") or [] if c.get("type") not in _FINAL]
    status["conditions"] = kept + others
    new["status"] = status
    return new


def plain_update(current: dict[str, Any], sent: dict[str, Any]) -> dict[str, Any]:
    """PUT of the object itself: only labels and annotations change."""
    new = dict(current)
    meta = dict(current["metadata"])
    for key in ("labels", "annotations"):
        meta.pop(key, None)
        if (sent.get("metadata") or {}).get(key):
            meta[key] = sent["metadata"][key]
    new["metadata"] = meta
    return new


def _check_conditions(name: str, conditions: list[dict[str, Any]]) -> None:
    errors = []
    kinds = [c.get("type") for c in conditions]
    for i, condition in enumerate(conditions):
        if condition.get("type") in _FINAL and condition.get("status") != "True":
            errors.append(
                field_invalid(
                    f"status.conditions[{i}].status",
                    condition.get("status", ""),
                    'supported values: "True"',
                )
            )
    if "Approved" in kinds and "Denied" in kinds:
        i = kinds.index("Denied")
        errors.append(
            field_invalid(
                f"status.conditions[{i}].type",
                "Denied",
                "Approved and Denied conditions are mutually exclusive",
            )
        )
    if errors:
        raise invalid("CertificateSigningRequest", name, errors, "certificates.k8s.io")


# ---- the kubelet-serving signer's check -------------------------------------------------
def kubelet_serving_error(obj: dict[str, Any]) -> str | None:
    """Why the kubelet-serving signer refuses this request (ValidateKubeletServingCSR)."""
    csr = parse_request(obj)
    if csr is None:
        return "unable to parse csr"
    subject = csr.subject
    orgs = [str(a.value) for a in subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    if orgs != ["system:nodes"]:
        return "subject organization is not system:nodes"
    sans = _sans(csr)
    if sans.get_values_for_type(x509.RFC822Name):
        return "Email subjectAltNames are not allowed"
    if sans.get_values_for_type(x509.UniformResourceIdentifier):
        return "URI subjectAltNames are not allowed"
    if not sans.get_values_for_type(x509.DNSName) and not sans.get_values_for_type(x509.IPAddress):
        return "DNS or IP subjectAltName is required"
    if set((obj.get("spec") or {}).get("usages") or []) not in _SERVING_SETS:
        return f"usages did not match {sorted(SERVING_USAGES)}"
    names = [str(a.value) for a in subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    if not names or not names[0].startswith(NODE_PREFIX):
        return "subject common name does not begin with system:node:"
    return None


def _sans(csr: x509.CertificateSigningRequest) -> x509.SubjectAlternativeName:
    try:
        return csr.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return x509.SubjectAlternativeName([])
