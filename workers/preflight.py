"""The last checks before the point of no return (the node agent), beyond the rules' re-check.

Right before the node agent starts, as late as possible:
- a control plane leaving a source with other control planes: the etcd quorum guard again
  (`joinops.rules.quorum`); a peer that went NotReady since the request was made stops the move;
- the target's cluster-info, read again as the node will read it: signed for this request's
  token (the JWS checked with the token's secret, as kubeadm does), and carrying exactly the CA
  certificates the JoinConfiguration pins.
Failing any of them is a `PermanentError`: nothing was done to the node yet.
"""

from __future__ import annotations

from joinops.clusters import capins
from joinops.clusters.kube import KubeCluster
from joinops.joinmaterial import BootstrapToken
from joinops.requests import step_texts
from joinops.rules import texts as rule_texts
from joinops.rules.quorum import unhealthy_peers
from workers.errors import PermanentError


def check_quorum(source: KubeCluster, node: str, source_name: str) -> None:
    problems = unhealthy_peers(source, node, source.control_planes())
    if problems:
        reason = rule_texts.quorum_at_risk(node, source_name, problems)
        raise PermanentError(rule_texts.quorum_at_risk_now(reason))


def check_cluster_info(
    target: KubeCluster, token_id: str, token: BootstrapToken | None, pinned: list[str]
) -> None:
    """`token`: None in a run resumed by another process (the secret half is never stored):
    then only the presence of the token's signature can be checked."""
    try:
        info = capins.read(target)
    except capins.ClusterInfoProblem as e:
        raise PermanentError(str(e)) from e
    signed = info.signed_for(token) if token is not None else token_id in info.signatures
    if not signed:
        raise PermanentError(step_texts.cluster_info_not_signed(target.name, token_id))
    if pinned and sorted(info.ca_hashes) != sorted(pinned):
        raise PermanentError(step_texts.cluster_info_changed(target.name))
