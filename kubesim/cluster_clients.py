"""How clients reach a cluster: its address and CA, kubeconfigs, the official client, and
the cluster-info a joining node reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubesim.cluster_reads import ClusterReads
from kubesim.kubeadm import normalise_endpoint
from kubesim.kubeconfig import client_kubeconfig, cluster_info_kubeconfig, dump
from kubesim.pki import CertificateAuthority
from kubesim.proxy import Proxy
from kubesim.resources import CONFIGMAPS


class ClusterClients(ClusterReads):
    port: int
    control_plane_endpoint: str
    api_server_port: int  # kube-apiserver --secure-port (kubeadm's localAPIEndpoint.bindPort)
    token: str
    ca: CertificateAuthority
    ca_pem: str
    proxy: Proxy | None
    kubeconfig_extra_cas: list[bytes]
    _ca_file: str | None

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def host_port(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def endpoints(self) -> set[tuple[str, int]]:
        """Every host:port that reaches this API server inside the world."""
        found = {("127.0.0.1", self.port), ("localhost", self.port)}
        parsed = self.endpoint_host_port()
        if parsed:
            found.add(parsed)
        return found

    def endpoint_host_port(self) -> tuple[str, int] | None:
        """The controlPlaneEndpoint as kubeadm's `GetControlPlaneEndpoint` reads it
        (cmd/kubeadm/app/util/endpoint.go): without a port, the API server's bind port."""
        if not self.control_plane_endpoint:
            return None
        return normalise_endpoint(self.control_plane_endpoint, self.api_server_port)

    @property
    def ca_file(self) -> str:
        """Path of a file holding the CA certificate (for clients that want a file)."""
        if self._ca_file is None:
            path = Path(self.world.tmpdir, f"{self.name}-ca.crt")
            path.write_text(self.ca_pem)
            self._ca_file = str(path)
        return self._ca_file

    def _cluster_info_server(self) -> str:
        parsed = self.endpoint_host_port()
        if parsed is None:
            return self.server
        if normalise_endpoint(self.control_plane_endpoint, 0) is not None:
            return f"https://{self.control_plane_endpoint}"  # its own port, as written
        return f"https://{self.control_plane_endpoint}:{parsed[1]}"  # kubeadm adds bindPort

    def set_cluster_info_cas(self, extra_pems: list[bytes]) -> None:
        """cluster-info's CA data becomes a bundle: the cluster's CA, then `extra_pems` (a CA
        rotation under way). The bootstrap signer signs it again."""
        with self.lock:
            bundle = self.ca.cert_pem + b"".join(extra_pems)
            kubeconfig = cluster_info_kubeconfig(self._cluster_info_server(), bundle)

            def rewrite(obj: dict[str, Any]) -> None:
                obj["data"] = {"kubeconfig": kubeconfig}  # old signatures no longer match

            self.store.mutate(CONFIGMAPS, "kube-public", "cluster-info", rewrite)

    @property
    def client_server(self) -> str:
        return self.proxy.server if self.proxy else self.server

    @property
    def client_ca_pem(self) -> bytes:
        """The CA data a client kubeconfig carries (a bundle when extra CAs are set)."""
        own = self.proxy.ca_pem if self.proxy else self.ca.cert_pem
        return b"".join(self.kubeconfig_extra_cas) + own

    def kubeconfig_dict(self, context: str | None = None) -> dict[str, Any]:
        name = context or self.name
        return client_kubeconfig([(name, self.client_server, self.client_ca_pem, self.token)], name)

    def write_kubeconfig(self, path: str | Path, context: str | None = None) -> Path:
        target = Path(path)
        target.write_text(dump(self.kubeconfig_dict(context)))
        return target

    def api_client(self) -> Any:
        """A ``kubernetes.client.ApiClient`` for this cluster (official client, over HTTPS)."""
        from kubernetes import client

        config = client.Configuration()
        config.host = self.client_server
        if self.proxy or self.kubeconfig_extra_cas:
            path = Path(self.world.tmpdir, f"{self.name}-client-ca.crt")
            path.write_bytes(self.client_ca_pem)
            config.ssl_ca_cert = str(path)
        else:
            config.ssl_ca_cert = self.ca_file
        config.api_key = {"authorization": self.token}
        config.api_key_prefix = {"authorization": "Bearer"}
        return client.ApiClient(config)
