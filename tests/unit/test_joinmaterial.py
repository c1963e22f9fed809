"""Join material: token format, CA hash, endpoints, JoinConfiguration by target version."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from joinops.joinmaterial import (
    ca_cert_hash,
    join_configuration,
    join_endpoint,
    new_bootstrap_token,
    new_certificate_key,
    normalise_endpoint,
    token_secret,
)
from joinops.requests.model import Version


def make_ca() -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, "kubernetes")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now.replace(year=now.year + 1))
        .sign(key, hashes.SHA256())
    )
    spki = key.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    return cert.public_bytes(Encoding.PEM), spki


def test_token_has_kubeadm_format_and_never_prints_its_secret():
    token = new_bootstrap_token()
    assert re.fullmatch(r"[a-z0-9]{6}\.[a-z0-9]{16}", token.value)
    assert token.secret not in repr(token)


def test_token_secret_is_what_kubeadm_writes():
    token = new_bootstrap_token()
    body = token_secret(token, datetime(2026, 12, 2, 17, 0, tzinfo=UTC), "d", {"a": "b"})
    assert body["type"] == "bootstrap.kubernetes.io/token"
    assert body["metadata"] == {
        "name": f"bootstrap-token-{token.id}",
        "namespace": "kube-system",
        "labels": {"a": "b"},
    }
    data = body["stringData"]
    assert data["expiration"] == "2026-12-02T17:00:00Z"
    assert data["usage-bootstrap-authentication"] == data["usage-bootstrap-signing"] == "true"
    assert data["auth-extra-groups"] == "system:bootstrappers:kubeadm:default-node-token"


def test_ca_hash_is_sha256_of_the_subject_public_key_info():
    pem, spki = make_ca()
    assert ca_cert_hash(pem) == "sha256:" + hashlib.sha256(spki).hexdigest()


@pytest.mark.parametrize(
    "given,expected",
    [
        ("cp.example.com", "cp.example.com:6443"),
        ("cp.example.com:443", "cp.example.com:443"),
        ("https://10.0.0.1:6443", "10.0.0.1:6443"),
        ("[fd00::1]:7443", "[fd00::1]:7443"),
        ("fd00::1", "[fd00::1]:6443"),
        ("https://[::1]", "[::1]:6443"),
    ],
)
def test_endpoints_are_normalised(given, expected):
    assert normalise_endpoint(given) == expected


def test_shared_endpoint_wins_over_the_kubeconfig_server():
    assert join_endpoint("lb.example.com", "https://10.0.0.5:6443") == "lb.example.com:6443"
    assert join_endpoint("", "https://10.0.0.5:6443") == "10.0.0.5:6443"


def test_bad_port_is_refused():
    with pytest.raises(ValueError, match="bad port"):
        normalise_endpoint("cp:99999")


@pytest.mark.parametrize(
    "version,api",
    [
        ("v1.30.9", "kubeadm.k8s.io/v1beta3"),
        ("v1.31.0", "kubeadm.k8s.io/v1beta4"),
        ("v1.37.1", "kubeadm.k8s.io/v1beta4"),
    ],
)
def test_join_configuration_api_version_follows_the_joining_kubeadm(version, api):
    config = join_configuration(
        kubeadm_version=Version.parse(version),
        endpoint="cp:6443",
        token=new_bootstrap_token(),
        ca_hashes=["sha256:ab"],
        node_name="node-7",
    )
    assert config["apiVersion"] == api
    assert config["nodeRegistration"] == {"name": "node-7"}
    assert "controlPlane" not in config


def test_control_plane_join_carries_the_certificate_key():
    key = new_certificate_key()
    assert re.fullmatch(r"[0-9a-f]{64}", key)
    config = join_configuration(
        kubeadm_version=Version.parse("v1.32.0"),
        endpoint="cp:6443",
        token=new_bootstrap_token(),
        ca_hashes=["sha256:ab"],
        node_name="node-7",
        certificate_key=key,
    )
    assert config["controlPlane"]["certificateKey"] == key
