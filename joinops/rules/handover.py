"""What still points at a control plane that leaves a source that stays: the source's
`controlPlaneEndpoint`, which every kubelet, kubeconfig and join of the source uses.

Listed in the plan; warned when it is the node's own address (every client of the source would
reach the moved node, now the target's API server), or an address no node has — a load
balancer, or a virtual IP the node may hold (keepalived keeps bidding for it unless stopped).
A name is resolved from here (a short, bounded lookup); one that does not resolve is only
listed. One call: the source's kubeadm-config.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout

from joinops.clusters.kube import KubeCluster
from joinops.joinmaterial import split_endpoint_host
from joinops.requests.model import NodeFacts
from joinops.rules import handover_texts
from joinops.rules.findings import Finding, Severity

RESOLVE_SECONDS = 2.0


def findings(
    source: KubeCluster, node: NodeFacts, control_planes: Sequence[NodeFacts]
) -> list[Finding]:
    endpoint = str(source.kubeadm_cluster_configuration().get("controlPlaneEndpoint") or "")
    if not endpoint:
        return []
    listed = Finding(
        Severity.NOTE, "source-endpoint", handover_texts.source_endpoint(source.name, endpoint)
    )
    addresses = _addresses(split_endpoint_host(endpoint))
    if not addresses:
        return [listed]
    if node.internal_ip and node.internal_ip in addresses:
        text = handover_texts.endpoint_is_node(node.name, source.name, endpoint, node.internal_ip)
        return [listed, Finding(Severity.WARNING, "endpoint-is-node", text)]
    known = {cp.internal_ip for cp in control_planes if cp.internal_ip}
    if not known & set(addresses):
        text = handover_texts.endpoint_may_be_vip(node.name, source.name, endpoint, addresses[0])
        return [listed, Finding(Severity.WARNING, "endpoint-may-be-vip", text)]
    return [listed]


def _addresses(host: str) -> list[str]:
    try:
        return [str(ipaddress.ip_address(host))]
    except ValueError:
        pass
    pool = ThreadPoolExecutor(1, thread_name_prefix="joinops-resolve")
    lookup = pool.submit(socket.getaddrinfo, host, None, proto=socket.IPPROTO_TCP)
    pool.shutdown(wait=False)  # a resolver that hangs is left to end on its own
    try:
        found = lookup.result(timeout=RESOLVE_SECONDS)
    except (OSError, UnicodeError, FuturesTimeout):
        return []
    return sorted({str(info[4][0]) for info in found})
