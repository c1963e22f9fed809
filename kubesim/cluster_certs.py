"""A cluster's kubelet configuration and certificate signing requests, as tests set and read
them."""

from __future__ import annotations

from typing import Any

from kubesim import csr_objects, kubelet_config
from kubesim.behaviours.certificates import file_csr, serving_request
from kubesim.cluster_reads import ClusterReads
from kubesim.resources import CONFIGMAPS, CSRS


class ClusterCerts(ClusterReads):
    def set_kubelet_config(
        self, cgroup_driver: str = "systemd", server_tls_bootstrap: bool = False
    ) -> None:
        """``kube-system/kubelet-config`` as kubeadm writes it with these fields (kubelets that
        join from now on read it)."""
        obj = kubelet_config.kubelet_config_map(cgroup_driver, server_tls_bootstrap)
        with self.lock:
            if self.store.get(CONFIGMAPS, kubelet_config.NAMESPACE, kubelet_config.NAME) is None:
                self.store.create(CONFIGMAPS, obj)
            else:
                self.store.put(CONFIGMAPS, obj)

    def file_csr(
        self,
        node: str,
        dns: list[str] | None = None,
        ips: list[str] | None = None,
        username: str | None = None,
        signer: str = csr_objects.KUBELET_SERVING,
        usages: list[str] | None = None,
        name: str | None = None,
    ) -> str:
        """A CSR as a kubelet files it, for a decoy: another node's, ``node``'s with an address
        it does not have (``ips``), or one for ``kube-apiserver-client-kubelet``. The request's
        CN is ``system:node:<node>``; ``dns``/``ips`` default to the node's own addresses."""
        entry = self.node(node) or {}
        addresses = entry.get("status", {}).get("addresses") or []
        if dns is None:
            dns = [a["address"] for a in addresses if a["type"] == "Hostname"]
        if ips is None:
            ips = [a["address"] for a in addresses if a["type"] == "InternalIP"]
        client = signer == csr_objects.KUBELET_CLIENT
        if usages is None:
            usages = csr_objects.CLIENT_USAGES if client else csr_objects.SERVING_USAGES
        pem = serving_request(node, [] if client else dns, [] if client else ips)
        requester = username or csr_objects.NODE_PREFIX + node
        return file_csr(
            self.whole, pem, signer, requester, list(csr_objects.NODE_GROUPS), usages, name
        )

    def csr(self, name: str) -> dict[str, Any] | None:
        return self._read(CSRS, "", name)

    def csrs(self, node: str | None = None) -> list[dict[str, Any]]:
        """Every CSR, or those filed as ``system:node:<node>``."""
        found = [e.copy() for e in self.store.list(CSRS)]
        if node is None:
            return found
        return [c for c in found if c["spec"]["username"] == csr_objects.NODE_PREFIX + node]
