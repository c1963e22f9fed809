"""A TLS-terminating proxy (or load balancer) in front of a simulated API server.

It listens on a port of its own with a serving certificate from a CA of its own, and passes
every request to the cluster behind it: a client configured with the proxy's URL and CA reaches
the cluster, but the CA it trusts is *not* the cluster's, and the server in its kubeconfig is
not the one in the cluster's `kube-public/cluster-info`. A joining node pinning the proxy's CA
is refused by the real cluster-info, as kubeadm refuses it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesim.pki import CertificateAuthority, server_context
from kubesim.server import ApiServer, Backend


@dataclass
class Proxy:
    cluster: Backend
    ca: CertificateAuthority = field(init=False)
    _http: ApiServer = field(init=False)

    def __post_init__(self) -> None:
        self.ca = CertificateAuthority(f"proxy-for-{self.cluster.name}")
        serving = self.ca.issue_server_cert(["localhost"], ["127.0.0.1", "::1"])
        self._http = ApiServer(self.cluster, server_context(serving))
        self._http.bind()

    @property
    def port(self) -> int:
        return self._http.port

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def ca_pem(self) -> bytes:
        return self.ca.cert_pem

    def start(self) -> None:
        self._http.start()

    def stop(self) -> None:
        self._http.stop()
