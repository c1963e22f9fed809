"""The pods the host agent acts on (upload-certs, node agents): their commands, certificate
key, mounts and privileges, and the kubeadm-certs Secret an upload writes."""

from __future__ import annotations

import base64
import re
from typing import TYPE_CHECKING, Any

import yaml
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

from kubesim import yamltext
from kubesim.pki import ca_cert_hash

if TYPE_CHECKING:
    from kubesim.protocols import SimCluster


UPLOAD_CERTS = "kubeadm init phase upload-certs"
CERTS_SECRET = "kubeadm-certs"
CERTS_TTL = 2 * 3600.0
KEY_RE = re.compile(r"--certificate-key(?:=|\s+)(\S+)")
# A key the shell reads from a file, as in --certificate-key "$(cat /path/key)".
KEY_FILE_RE = re.compile(r"--certificate-key(?:=|\s+)\"?\$\(cat\s+([^)\"\s]+)\)\"?")
HEX64 = re.compile(r"^[0-9a-f]{64}$")
CERT_FILES = (
    "ca.crt",
    "ca.key",
    "etcd-ca.crt",
    "etcd-ca.key",
    "front-proxy-ca.crt",
    "front-proxy-ca.key",
    "sa.key",
    "sa.pub",
)


def cluster_info_ca_hashes(kubeconfig: str) -> list[str]:
    """The `sha256:` pins of every CA certificate in cluster-info's kubeconfig."""
    try:
        doc = yamltext.load(kubeconfig)
        data = doc["clusters"][0]["cluster"]["certificate-authority-data"]
        certs = x509.load_pem_x509_certificates(base64.b64decode(data))
    except (yaml.YAMLError, KeyError, IndexError, TypeError, ValueError):
        return []
    return [ca_cert_hash(cert.public_bytes(Encoding.PEM)) for cert in certs]


def command_lines(pod: dict[str, Any]) -> list[str]:
    spec = pod.get("spec", {})
    lines = []
    for container in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        words = [str(w) for w in (container.get("command") or []) + (container.get("args") or [])]
        lines.append(" ".join(words))
    return lines


def certificate_key(cluster: SimCluster, pod: dict[str, Any], text: str) -> str | None:
    """The --certificate-key value as the host's shell sees it: literal, or read with
    `$(cat FILE)` from a Secret mounted into the pod."""
    from_file = KEY_FILE_RE.search(text)
    if from_file is None:
        match = KEY_RE.search(text)
        return match.group(1) if match else None
    path = from_file.group(1)
    spec = pod.get("spec", {})
    volumes = {v.get("name"): v for v in spec.get("volumes") or []}
    for container in spec.get("containers") or []:
        for mount in container.get("volumeMounts") or []:
            root = mount.get("mountPath", "").rstrip("/") + "/"
            secret = (volumes.get(mount.get("name")) or {}).get("secret")
            if secret and path.startswith(root):
                values = cluster.secret_values(
                    pod["metadata"]["namespace"], secret.get("secretName", "")
                )
                return (values or {}).get(path[len(root) :], "").strip() or None
    return None


def config_has_external_etcd(cluster: SimCluster, pod: dict[str, Any], text: str) -> bool:
    """Does upload-certs read, with `--config`, a ClusterConfiguration naming an external etcd
    (from a Secret mounted into the pod)? Then kubeadm uploads its client certificates too
    (cmd/kubeadm/app/phases/copycerts/copycerts.go: certsToTransfer adds external-etcd-ca.crt,
    external-etcd.crt and external-etcd.key when etcd.external is set)."""
    if "--config" not in text.split() and "--config=" not in text:
        return False
    namespace = pod["metadata"]["namespace"]
    for volume in pod.get("spec", {}).get("volumes") or []:
        secret = (volume.get("secret") or {}).get("secretName")
        if not secret or not mounted(pod, volume.get("name", "")):
            continue
        for value in (cluster.secret_values(namespace, secret) or {}).values():
            try:
                docs = yamltext.load_all(value)
            except yaml.YAMLError:
                continue
            if any(_external_etcd(doc) for doc in docs):
                return True
    return False


def _external_etcd(doc: Any) -> bool:
    is_cluster_config = isinstance(doc, dict) and doc.get("kind") == "ClusterConfiguration"
    return is_cluster_config and bool((doc.get("etcd") or {}).get("external"))


def mounted(pod: dict[str, Any], volume_name: str) -> bool:
    for container in pod.get("spec", {}).get("containers") or []:
        if any(m.get("name") == volume_name for m in container.get("volumeMounts") or []):
            return True
    return False


def host_root_mounted(pod: dict[str, Any]) -> bool:
    for volume in pod.get("spec", {}).get("volumes") or []:
        path = (volume.get("hostPath") or {}).get("path", "")
        if path.rstrip("/") == "" and "hostPath" in volume and mounted(pod, volume.get("name", "")):
            return True
    return False


def privileged(pod: dict[str, Any]) -> bool:
    return any(
        (c.get("securityContext") or {}).get("privileged") is True
        for c in pod.get("spec", {}).get("containers") or []
    )


def tolerates_everything(pod: dict[str, Any]) -> bool:
    return any(
        t.get("operator") == "Exists" and not t.get("key") and not t.get("effect")
        for t in pod.get("spec", {}).get("tolerations") or []
    )


def agent_problems(pod: dict[str, Any]) -> list[str]:
    """What a node agent pod lacks to act on its host (empty: it can)."""
    spec = pod.get("spec", {})
    problems = []
    if not privileged(pod):
        problems.append("not privileged")
    if not spec.get("hostPID"):
        problems.append("no hostPID")
    if not spec.get("hostNetwork"):
        problems.append("no hostNetwork")
    if not host_root_mounted(pod):
        problems.append("the host's / is not mounted")
    if not tolerates_everything(pod):
        problems.append("does not tolerate every taint (operator: Exists)")
    return problems
