"""A stacked etcd's own member list, read (and a dead member removed) on a control plane.

etcd is not behind the Kubernetes API, so joinops asks it where it runs: a short-lived
privileged pod pinned to a healthy control plane (the pattern of the certificate upload) execs
etcdctl inside that node's etcd container (`chroot /host crictl exec`; etcdctl ships in the etcd
image, not on the host) with the client certificates kubeadm's own etcd client uses
(cmd/kubeadm/app/util/etcd/etcd.go, NewFromCluster: <certificatesDir>/etcd/ca.crt and
healthcheck-client.crt/.key, mounted at the same path in kubeadm's etcd static pod). The script
is a constant (a member id to remove is checked to be hex first); its output is the pod's
termination message: `member list -w json`, then `endpoint health --cluster -w json` (etcd's
etcdctl/ctlv3/command/printer_json.go shapes). Each read costs four API calls: create the pod,
list and watch it to its end, delete it.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from joinops.clusters import hostpods, podstatus, watches
from joinops.clusters.kube import KubeCluster
from joinops.errors import ClusterError

TIMEOUT_SECONDS = 120.0  # the pod's start and its etcdctl calls, image pull included
POD_PREFIX = "joinops-etcd-members-"
ETCD_CERTS = (
    "--cacert=/etc/kubernetes/pki/etcd/ca.crt "
    "--cert=/etc/kubernetes/pki/etcd/healthcheck-client.crt "
    "--key=/etc/kubernetes/pki/etcd/healthcheck-client.key"
)
HEX_ID = re.compile(r"^[0-9a-f]{1,16}$")


class MembersUnreadable(Exception):
    """The member list (or a removal) could not be had: `what` says which and why."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


@dataclass(frozen=True)
class EtcdMember:
    id: int
    name: str  # "" until the member started
    peer_urls: tuple[str, ...]
    client_urls: tuple[str, ...]  # none until the member started
    learner: bool
    healthy: bool  # its client URL answered `endpoint health`

    @property
    def hex_id(self) -> str:
        return f"{self.id:x}"

    @property
    def started(self) -> bool:
        return bool(self.name and self.client_urls)

    @property
    def peer_hosts(self) -> tuple[str, ...]:
        return tuple(urlsplit(url).hostname or "" for url in self.peer_urls)

    def label(self) -> str:
        """How a person finds it in `etcdctl member list`: name (or id) and peer URL."""
        peers = ", ".join(self.peer_urls) or "no peer URL"
        return f"{self.name or self.hex_id} ({self.hex_id}, {peers})"


@dataclass(frozen=True)
class EtcdPod:
    """Where and how the etcdctl pod runs: config agent.namespace and agent.image."""

    namespace: str
    image: str
    timeout: float = TIMEOUT_SECONDS


def external_etcd(cluster_configuration: dict[str, Any]) -> bool:
    """Does kubeadm's ClusterConfiguration name an external etcd (`etcd.external`)? Then the
    control planes run no etcd of their own and there is no stacked member list."""
    etcd = cluster_configuration.get("etcd")
    return isinstance(etcd, dict) and bool(etcd.get("external"))


def remove_command(member: EtcdMember) -> str:
    """What an operator runs on a healthy control plane to remove `member` by hand."""
    return f"etcdctl {ETCD_CERTS} --endpoints=https://127.0.0.1:2379 member remove {member.hex_id}"


def script(action: str) -> str:
    """The pod's shell: exec etcdctl in the node's running etcd container."""
    etcdctl = (
        'chroot /host crictl exec "$id" etcdctl --endpoints=https://127.0.0.1:2379 ' + ETCD_CERTS
    )
    return "\n".join(
        [
            "set -u",
            "out=/dev/termination-log",
            "id=$(chroot /host crictl ps -q --state running --name '^etcd$' | head -n1)",
            '[ -n "$id" ] || { echo "no running etcd container on this node" > $out; exit 1; }',
            f"res=$({etcdctl} {action} 2>&1) || {{ printf '%s' \"$res\" | tail -c 3000 > $out; "
            "exit 1; }",
            f"health=$({etcdctl} endpoint health --cluster -w json 2>/dev/null)"
            if action == "member list -w json"
            else 'health=""',
            'printf \'%s\\n%s\\n\' "$res" "$health" > $out',
        ]
    )


def read(
    cluster: KubeCluster, node: str, pod: EtcdPod, clock: Callable[[], float] = time.time
) -> list[EtcdMember]:
    """The member list as `node`'s etcd answers it, with each member's health."""
    message = _run(cluster, node, pod, "member list -w json", clock)
    return parse(message)


def remove(
    cluster: KubeCluster,
    node: str,
    member: EtcdMember,
    pod: EtcdPod,
    clock: Callable[[], float] = time.time,
) -> None:
    """`etcdctl member remove <id>`, run on `node`; MembersUnreadable when it failed."""
    if not HEX_ID.match(member.hex_id):
        raise ValueError(f"not an etcd member id: {member.hex_id!r}")
    _run(cluster, node, pod, f"member remove {member.hex_id}", clock)


def parse(message: str) -> list[EtcdMember]:
    lines = message.strip().splitlines()
    try:
        listing = json.loads(lines[0])
        health = json.loads(lines[1]) if len(lines) > 1 and lines[1].strip() else []
    except (IndexError, ValueError) as e:
        raise MembersUnreadable(f"etcdctl's answer did not parse: {message[:200]!r}") from e
    healthy = {str(row.get("endpoint")) for row in health if row.get("health") is True}
    return [_member(raw, healthy) for raw in listing.get("members") or []]


def _member(raw: dict[str, Any], healthy: set[str]) -> EtcdMember:
    clients = tuple(str(u) for u in raw.get("clientURLs") or [])
    return EtcdMember(
        id=int(raw.get("ID") or 0),
        name=str(raw.get("name") or ""),
        peer_urls=tuple(str(u) for u in raw.get("peerURLs") or []),
        client_urls=clients,
        learner=bool(raw.get("isLearner")),
        healthy=any(url in healthy for url in clients),
    )


def _run(
    cluster: KubeCluster, node: str, pod: EtcdPod, action: str, clock: Callable[[], float]
) -> str:
    name = POD_PREFIX + secrets.token_hex(4)
    body = _pod(pod, name, node, script(action))
    try:
        created = hostpods.create_pod(cluster, pod.namespace, body)
        ended = watches.wait_for(
            cluster,
            f"pods/{name}",
            cluster.core.list_namespaced_pod,
            pod.namespace,
            matches=lambda p: bool(p.status and p.status.phase in ("Succeeded", "Failed")),
            deadline=clock() + pod.timeout,
            clock=clock,
            since=created or None,  # watched from its creation: no list first
            field_selector=f"metadata.name={name}",
        )
    except ClusterError as e:
        raise MembersUnreadable(f"the etcdctl pod on `{node}`: {e.detail}") from e
    finally:
        try:
            hostpods.delete_pod(cluster, pod.namespace, name)
        except ClusterError:
            pass  # the cluster is away: a finished pod holds nothing
    if ended is None:
        raise MembersUnreadable(
            f"the etcdctl pod on `{node}` did not end within {pod.timeout:.0f} s"
        )
    message = podstatus.termination_message(ended)
    if ended.status.phase != "Succeeded":
        raise MembersUnreadable(f"etcdctl on `{node}`: {message or 'failed'}")
    return message


def _pod(pod: EtcdPod, name: str, node: str, shell: str) -> dict[str, Any]:
    return hostpods.privileged_pod(
        namespace=pod.namespace,
        name=name,
        node=node,
        image=pod.image,
        script=shell,
        pod_labels={**hostpods.MANAGED_LABELS, "app.kubernetes.io/name": "joinops-etcd-members"},
        container="etcdctl",
    )
