"""`etcdctl` run on a control-plane host, as a short-lived privileged pod runs it there:
`chroot /host crictl exec <the etcd container> etcdctl --endpoints=https://127.0.0.1:2379
--cacert /etc/kubernetes/pki/etcd/ca.crt --cert .../healthcheck-client.crt --key ...` with
`member list -w json`, `endpoint health --cluster -w json` or `member remove <hex id>`.

kubeadm's own etcd client uses exactly those files (cmd/kubeadm/app/util/etcd/etcd.go,
NewFromCluster: the etcd CA and the healthcheck-client pair under certificatesDir/etcd), and
kubeadm's etcd static pod mounts certificatesDir/etcd at the same path, so they are found inside
the etcd container. A host with no running etcd container (a worker, an external-etcd control
plane, a reset host) has nothing to exec into. The pod's output is its termination message: the
member list's JSON, then a line with the health JSON (kubesim.etcd); it ends Succeeded, or
Failed with etcdctl's error.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kubesim.etcd import NO_LEADER

if TYPE_CHECKING:
    from kubesim.hosts import Host
    from kubesim.protocols import SimCluster

MARK = "etcdctl"
CERT_FLAGS = (
    "/etc/kubernetes/pki/etcd/ca.crt",
    "/etc/kubernetes/pki/etcd/healthcheck-client.crt",
    "/etc/kubernetes/pki/etcd/healthcheck-client.key",
)
REMOVE_RE = re.compile(r"member remove\s+\"?([0-9a-fA-F]{1,16})\b")


def answer(cluster: SimCluster, host: Host, text: str) -> tuple[bool, str]:
    """(succeeded, termination message) of the pod's script."""
    member = cluster.etcd.named(host.name) if host.kubelet_running else None
    if "crictl exec" not in text or member is None or not member.healthy:
        return False, "no running etcd container on this node (crictl ps --name etcd: none)"
    missing = [path for path in CERT_FLAGS if path not in text]
    if missing:
        return False, (
            "Error: context deadline exceeded (x509: the client certificate is not the one "
            f"etcd trusts: missing {', '.join(missing)})"
        )
    removal = REMOVE_RE.search(text)
    if removal is not None:
        return _remove(cluster, int(removal.group(1), 16))
    if "member list" not in text:
        return False, "Error: unknown etcdctl command"
    if not cluster.etcd.has_quorum():
        return False, f"Error: {NO_LEADER} (no etcd leader: a majority of members is down)"
    listing = cluster.etcd.list_json(member)
    health = cluster.etcd.health_json() if "endpoint health" in text else ""
    return True, f"{listing}\n{health}".rstrip("\n")


def _remove(cluster: SimCluster, ident: int) -> tuple[bool, str]:
    error = cluster.etcd.remove(ident)
    if error:
        return False, f"Error: {error}"
    return True, f"Member {ident:16x} removed from cluster {cluster.etcd.cluster_id:16x}"


def is_etcdctl(text: str) -> bool:
    return MARK in text and "kubeadm join" not in text
