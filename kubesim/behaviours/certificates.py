"""Kubelet serving certificates: the kubelet asks, the controller manager's signer signs.

The kubelet (pkg/kubelet/certificate/kubelet.go ``NewKubeletServerCertificateManager``): with
``serverTLSBootstrap: true`` in its configuration — which ``kubeadm join`` downloads from
``kube-system/kubelet-config`` — it files a CertificateSigningRequest for signer
``kubernetes.io/kubelet-serving`` once its Node has addresses: CN ``system:node:<node>``, O
``system:nodes``, DNS SANs from its Hostname/InternalDNS/ExternalDNS addresses, IP SANs from its
InternalIP/ExternalIP, usages digital signature, key encipherment, server auth; its identity is
``system:node:<node>`` in ``system:nodes``. Nothing approves it by default: the controller
manager's csrapproving controller approves only kubelet *client* certificates.

The signer (pkg/controller/certificates/signer/signer.go): an approved, not failed request for a
signer it knows is checked (``ValidateKubeletServingCSR`` for kubelet-serving; a refusal is a
``Failed`` condition, reason ``SignerValidationFailure``) and gets ``status.certificate`` from
the cluster CA, ``signer_delay_seconds`` later.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cryptography import x509

from kubesim import csr_objects, kubelet_config
from kubesim.entries import Change
from kubesim.resources import CONFIGMAPS, CSRS, NODES

if TYPE_CHECKING:
    from kubesim.protocols import SimCluster, SimWorld

_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"
_DNS_TYPES = ("Hostname", "InternalDNS", "ExternalDNS")
_IP_TYPES = ("InternalIP", "ExternalIP")
_SIGNERS = (csr_objects.KUBELET_SERVING, csr_objects.KUBELET_CLIENT)


def file_csr(
    cluster: SimCluster,
    pem: bytes,
    signer: str,
    username: str,
    groups: list[str],
    usages: list[str],
    name: str | None = None,
) -> str:
    """Store a request as its requester's client would create it (``generateName: csr-``)."""
    with cluster.lock:
        while name is None or cluster.store.get(CSRS, "", name) is not None:
            name = "csr-" + "".join(random.choices(_NAME_CHARS, k=5))
        obj = csr_objects.csr_object(name, pem, signer, username, groups, usages)
        cluster.store.create(CSRS, obj)
        return name


def serving_request(node: str, dns: list[str], ips: list[str]) -> bytes:
    return csr_objects.request_pem(csr_objects.NODE_PREFIX + node, ["system:nodes"], dns, ips)


class Certificates:
    def __init__(self, world: SimWorld) -> None:
        self.world = world
        self._held: list[Callable[[], Any]] | None = None  # kubelets' requests, while held

    def hold(self, hold: bool = True) -> None:
        """Hold (or release) the serving requests kubelets file: held, a kubelet that starts
        files its request only when released (World.hold_kubelet_csrs)."""
        with self.world.lock:
            if hold:
                self._held = self._held if self._held is not None else []
                return
            for action in self._held or []:
                self.world.schedule(0.0, action)
            self._held = None

    # ---- the kubelet ---------------------------------------------------------------------
    def on_node(self, cluster: SimCluster, change: Change) -> None:
        if change.type != "ADDED":
            return
        name = change.new.meta["name"]
        host = cluster.hosts.get(name)
        if host is None or not host.kubelet_running or not self._bootstraps(cluster):
            return
        with self.world.lock:
            if self._held is not None:
                self._held.append(lambda: self.kubelet_asks(cluster, name))
                return
        self.world.schedule(
            self.world.signer_delay_seconds, lambda: self.kubelet_asks(cluster, name)
        )

    def _bootstraps(self, cluster: SimCluster) -> bool:
        entry = cluster.store.get(CONFIGMAPS, kubelet_config.NAMESPACE, kubelet_config.NAME)
        return kubelet_config.server_tls_bootstrap(entry.obj if entry else None)

    def kubelet_asks(self, cluster: SimCluster, node: str) -> str | None:
        """The node's kubelet files its serving CSR, from the addresses its Node shows."""
        with cluster.lock:
            entry = cluster.store.get(NODES, "", node)
            host = cluster.hosts.get(node)
            if entry is None or host is None or not host.kubelet_running or cluster.destroyed:
                return None
            addresses = entry.obj.get("status", {}).get("addresses") or []
            dns = [a["address"] for a in addresses if a.get("type") in _DNS_TYPES]
            ips = [a["address"] for a in addresses if a.get("type") in _IP_TYPES]
            return file_csr(
                cluster,
                serving_request(node, dns, ips),
                csr_objects.KUBELET_SERVING,
                csr_objects.NODE_PREFIX + node,
                list(csr_objects.NODE_GROUPS),
                list(csr_objects.SERVING_USAGES),
            )

    # ---- the signer ----------------------------------------------------------------------
    def on_csr(self, cluster: SimCluster, change: Change) -> None:
        if change.type == "DELETED" or not _to_sign(change.new.obj):
            return
        name = change.new.meta["name"]
        self.world.schedule(self.world.signer_delay_seconds, lambda: self.sign(cluster, name))

    def sign(self, cluster: SimCluster, name: str) -> None:
        with cluster.lock:
            entry = cluster.store.get(CSRS, "", name)
            if entry is None or not _to_sign(entry.obj) or cluster.destroyed:
                return
            obj = entry.copy()
            serving = obj["spec"]["signerName"] == csr_objects.KUBELET_SERVING
            refused = csr_objects.kubelet_serving_error(obj) if serving else None
            request = csr_objects.parse_request(obj)
            if refused is not None or request is None:
                obj["status"].setdefault("conditions", []).append(
                    {
                        "type": "Failed",
                        "status": "True",
                        "reason": "SignerValidationFailure",
                        "message": refused or "unable to parse csr",
                        "lastUpdateTime": cluster.now(),
                        "lastTransitionTime": cluster.now(),
                    }
                )
            else:
                pem = cluster.ca.sign_request(request, server=serving)
                obj["status"]["certificate"] = base64.b64encode(pem).decode()
            cluster.store.put(CSRS, obj)


def _to_sign(obj: dict[str, object]) -> bool:
    status = obj.get("status") or {}
    spec = obj.get("spec") or {}
    return (
        isinstance(status, dict)
        and isinstance(spec, dict)
        and spec.get("signerName") in _SIGNERS
        and not status.get("certificate")
        and csr_objects.has_condition(obj, "Approved")
        and not csr_objects.has_condition(obj, "Failed")
    )


def certificate(obj: dict[str, object]) -> x509.Certificate | None:
    """The issued certificate of a CSR object, parsed; None before it is signed."""
    status = obj.get("status") or {}
    data = status.get("certificate") if isinstance(status, dict) else None
    return x509.load_pem_x509_certificate(base64.b64decode(data)) if data else None
