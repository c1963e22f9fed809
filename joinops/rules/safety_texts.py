"""What joinops says about the safety of a move: etcd quorum, the CA pins joinops takes from
cluster-info, a control-plane join's completion, and kubeadm's version rule (issue 14)."""

from __future__ import annotations

from joinops.requests.model import Version

CLUSTER_INFO = "ConfigMap kube-public/cluster-info"


# --- etcd quorum in the source ---


def peer_node_not_ready(node: str) -> str:
    return f"`{node}` (node NotReady)"


def peer_pod_missing(pod: str) -> str:
    return f"`kube-system/{pod}` (no such mirror pod)"


def peer_pod_not_ready(pod: str) -> str:
    return f"`kube-system/{pod}` (not Ready)"


def quorum_at_risk(node: str, source: str, problems: list[str]) -> str:
    return (
        f"Moving control plane `{node}` out of {source} needs every other control plane "
        f"healthy, and these are not: {', '.join(problems)}. etcd changes membership only "
        f"while a majority of its members is healthy, and `kubeadm reset` wipes `{node}`'s "
        f"member even when removing it failed. Bring them back to Ready first."
    )


def quorum_at_risk_now(reason: str) -> str:
    return f"Right before the node agent, the source's control planes were checked again: {reason}"


def etcd_single_member_left(node: str, source: str) -> str:
    return (
        f"Removing control plane `{node}` leaves {source} with one etcd member: no fault "
        f"tolerance is left, and losing that member stops {source}'s control plane."
    )


# --- cluster-info: the CA pins and the endpoint the node will see ---


def cluster_info_missing(target: str) -> str:
    return (
        f"{target} has no {CLUSTER_INFO}, which a joining node reads to find and trust the "
        f"API server (kubeadm writes it at `init`; `kubeadm init phase bootstrap-token` "
        f"makes it again). Nothing was changed."
    )


def cluster_info_unusable(target: str, what: str) -> str:
    return (
        f"{target}'s {CLUSTER_INFO} is unusable: {what}. A joining node could not trust its "
        f"API server. Nothing was changed."
    )


def cluster_info_not_signed(target: str, token_id: str) -> str:
    return (
        f"{target}'s {CLUSTER_INFO} does not carry a valid signature for bootstrap token "
        f"`{token_id}` (key `jws-kubeconfig-{token_id}`): the node would refuse it. Is the "
        f"controller manager's bootstrap signer running? Nothing was done to the node."
    )


def cluster_info_changed(target: str) -> str:
    return (
        f"{target}'s CA certificates in {CLUSTER_INFO} changed since the join material was "
        f"made (a CA rotation?): the pins no longer match. Retry to make new material."
    )


# --- a control-plane join is complete only when its control plane is ---


def control_plane_waiting(node: str, target: str, missing: list[str]) -> str:
    return f"`{node}` is Ready in {target}; waiting for its control plane: {', '.join(missing)}."


def control_plane_incomplete(
    node: str, target: str, missing: list[str], unit: str, request_id: str
) -> str:
    return (
        f"`{node}` registered and turned Ready in {target}, but its control plane did not "
        f"complete in time ({', '.join(missing)}): kubeadm's control-plane-join phase (etcd "
        f"member, static pods, control-plane label) has not finished. It has left the source. "
        f"How to look: on the host, `journalctl -u {unit}`; in {target}, `kubectl -n "
        f"kube-system get pods -o wide | grep {node}` and `kubectl get node {node}`. Do not "
        f"move another control plane of {target} until this one is healthy. Then "
        f"`/join retry {request_id}` to check again."
    )


def missing_mirror_pod(pod: str) -> str:
    return f"`kube-system/{pod}` not Running and Ready"


def missing_control_plane_label() -> str:
    return "the node-role.kubernetes.io/control-plane label"


# --- kubeadm's version rule for control-plane joins ---


def control_plane_one_minor_behind(node: str, kubelet: Version, target: str, api: Version) -> str:
    return (
        f"`{node}` runs {kubelet}, one minor behind {target}'s control plane {api}. kubeadm "
        f"documents that a control-plane join needs kubeadm of the control plane's minor: "
        f"consider upgrading `{node}` to {api.minor_line} first."
    )
