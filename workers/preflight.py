"""The last checks before the point of no return (the node agent), beyond the rules' re-check.

Right before the node agent starts, as late as possible:
- a control plane leaving a source with other control planes: the etcd quorum guard again
  (`joinops.rules.quorum`, and etcd's own member list, `joinops.rules.etcdguard`); a peer that
  went NotReady, or a member that died, since the request was made stops the move;
- the target's cluster-info, read again as the node will read it: signed for this request's
  token (the JWS checked with the token's secret, as kubeadm does), and carrying exactly the CA
  certificates the JoinConfiguration pins.
Failing any of them is a `PermanentError`: nothing was done to the node yet.
"""

from __future__ import annotations

from joinops.clusters import capins
from joinops.clusters.etcdmembers import EtcdPod
from joinops.clusters.kube import KubeCluster
from joinops.joinmaterial import BootstrapToken
from joinops.requests import step_texts
from joinops.rules import etcdguard
from joinops.rules import texts as rule_texts
from joinops.rules.quorum import unhealthy_peers
from workers.errors import PermanentError


def check_quorum(source: KubeCluster, node: str, source_name: str, etcd_pod: EtcdPod) -> None:
    """The peers' Nodes and mirror pods, then etcd's own member list (`etcdguard`)."""
    control_planes = source.control_planes()
    pods = source.control_plane_pods()
    problems = unhealthy_peers(source, node, control_planes, pods)
    if problems:
        reason = rule_texts.quorum_at_risk(node, source_name, problems)
        raise PermanentError(rule_texts.quorum_at_risk_now(reason))
    unread, members = etcdguard.check(source, node, control_planes, pods, etcd_pod)
    if unread:
        reason = rule_texts.etcd_members_unreadable(node, source_name, unread)
        raise PermanentError(rule_texts.quorum_at_risk_now(reason))
    if members:
        reason = rule_texts.etcd_members_at_risk(node, source_name, members)
        raise PermanentError(rule_texts.quorum_at_risk_now(reason))


def check_cluster_info(
    target: KubeCluster,
    token_id: str,
    token: BootstrapToken | None,
    pinned: list[str],
    seen: dict[str, str] | None = None,
) -> None:
    """`token`: None in a run resumed by another process (the secret half is never stored):
    then only the presence of the token's signature can be checked. `seen`: cluster-info's
    data as read a moment before in the same step (None: read it now)."""
    try:
        info = capins.read(target) if seen is None else capins.parse(target.name, seen)
    except capins.ClusterInfoProblem as e:
        raise PermanentError(str(e)) from e
    signed = info.signed_for(token) if token is not None else token_id in info.signatures
    if not signed:
        raise PermanentError(step_texts.cluster_info_not_signed(target.name, token_id))
    if pinned and sorted(info.ca_hashes) != sorted(pinned):
        raise PermanentError(step_texts.cluster_info_changed(target.name))
