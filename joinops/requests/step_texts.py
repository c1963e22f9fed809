"""What a migration's steps say as they run: the plan's titles, each step's line, and the
problems a step meets (cluster-info, a control plane that has not completed). The drain's
words are in joinops/requests/drain_texts.py.

Shared by the Slack thread and the terminal. Text only, no formatting markup beyond backticks.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from joinops.requests.surface import command
from joinops.wording import minutes

CLUSTER_INFO = "ConfigMap kube-public/cluster-info"


STEP_TITLES = {
    "check": "Re-check the rules; take the node and control-plane locks",
    "join-material": "Prepare join material in {target} (bootstrap token{cert}; the node's "
    "kubelet flags)",
    "probe": "Probe `{node}` before any change: reach {target}, run kubeadm's join preflight",
    "cordon": "Cordon `{node}` in {source}",
    "drain": "Drain `{node}`: evict its pods (disruption budgets honoured), wait until gone",
    "agent": "Start the node agent on `{node}`: kubeadm reset, then kubeadm join {target}",
    "wait-joined": "Wait for `{node}` to be Ready in {target}",
    "cleanup": "Clean up: delete `{node}` from {source}, the agent and the token; label it",
}


# --- check ---


def rules_refuse_now(reasons: str) -> str:
    return (
        f"The rules no longer allow this move (the clusters changed since the request): {reasons}"
    )


def rules_still_allow(versions: str) -> str:
    return f"The rules still allow the move. {versions}".strip()


# --- join material, and the cluster-info the node will read ---


def token_description(request_id: str) -> str:
    return f"joinops {request_id}: joins one node, deleted once it has joined"


def material_ready(target: str, token_id: str, endpoint: str, control_plane: bool) -> str:
    certs = " Control-plane certificates uploaded (valid about 2 h)." if control_plane else ""
    return (
        f"Join material ready in {target}: bootstrap token {token_id} (the id only; the "
        f"secret is never shown), endpoint {endpoint}.{certs}"
    )


def no_ready_control_plane(target: str) -> str:
    return (
        f"{target} has no Ready control-plane node to upload the control-plane "
        f"certificates from. Bring one back, then retry."
    )


def token_not_signed(target: str) -> str:
    return (
        f"{target}'s cluster-info was not signed for the new bootstrap token: is its "
        f"controller manager (bootstrap signer) running? Nothing was done to the node."
    )


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


# --- any step: the Kubernetes API asked joinops to wait (clusters/retry_after.py) ---


def api_asked_to_wait(
    cluster: str, status: int, asked: int | None, seconds: float, retries: int
) -> str:
    """`asked`: the answer's Retry-After in seconds (None: none, or not a number); `seconds`:
    what joinops waits (the cap when `asked` is more)."""
    what = (
        f"{cluster} is throttling joinops (HTTP 429 Too Many Requests)"
        if status == 429
        else f"{cluster} answered HTTP {status}"
    )
    if asked is None:
        wait = f"without saying how long to wait: joinops retries after {seconds:g} s"
    elif asked > seconds:
        wait = (
            f"and asked for a wait of {minutes(timedelta(seconds=asked))}: joinops waits at most "
            f"{seconds:g} s at a time, then retries"
        )
    else:
        wait = f"and asked for a wait of {seconds:g} s: joinops retries then"
    return f"{what} {wait} (up to {retries} retries of each call)."


# --- cordon and drain ---


def cordoned(node: str, source: str) -> str:
    return f"`{node}` cordoned in {source}: no new pods will be scheduled on it."


# the drain's own words: joinops/requests/drain_texts.py


# --- the node agent, the join, the clean-up ---


def agent_started(node: str, source: str, target: str, destroys_source: bool) -> str:
    gone = f" {source} is being destroyed with it." if destroys_source else ""
    return (
        f"Node agent started on `{node}`: `kubeadm reset`, the clean-up (with joinops's VIP "
        f"layout: keepalived and nginx stopped), `kubeadm join` {target}. From here `{node}` "
        f"leaves {source}; this cannot be cancelled.{gone}"
    )


def joined(node: str, target: str, seconds: float) -> str:
    return f"`{node}` is Ready in {target} ({seconds:.1f} s after the agent started)."


def control_plane_waiting(node: str, target: str, missing: list[str]) -> str:
    return f"`{node}` is Ready in {target}; waiting for its control plane: {', '.join(missing)}."


def control_plane_incomplete(
    node: str, target: str, missing: list[str], unit: str, request: Any
) -> str:
    return (
        f"`{node}` registered and turned Ready in {target}, but its control plane did not "
        f"complete in time ({', '.join(missing)}): kubeadm's control-plane-join phase (etcd "
        f"member, static pods, control-plane label) has not finished. It has left the source. "
        f"How to look: on the host, `journalctl -u {unit}`; in {target}, `kubectl -n "
        f"kube-system get pods -o wide | grep {node}` and `kubectl get node {node}`. Do not "
        f"move another control plane of {target} until this one is healthy. Then "
        f"{command(request, 'retry')} to check again."
    )


def missing_mirror_pod(pod: str) -> str:
    return f"`kube-system/{pod}` not Running and Ready"


def missing_control_plane_label() -> str:
    return "the node-role.kubernetes.io/control-plane label"


def leftover(what: str, cluster: str) -> str:
    return f"could not delete {what} from {cluster} (unreachable): remove it by hand"


def cleaned_up(request: Any, source_gone: bool, notes: list[str], checked: str = "") -> str:
    where = (
        f"{request.source} no longer exists, as expected"
        if source_gone
        else f"`{request.node}` removed from {request.source}"
    )
    tail = (" Left behind: " + "; ".join(notes) + ".") if notes else ""
    ran = f" Checked: {checked}." if checked else ""
    return (
        f"Cleaned up: {where}; node agent and bootstrap token deleted; "
        f"`{request.node}` labelled as {request.role} in {request.target}.{ran}{tail}"
    )


# --- the clean-up: the moved node's kubelet serving certificate (workers.serving_certs) ---

SERVING_CSRS = "kubectl get csr --field-selector spec.signerName=kubernetes.io/kubelet-serving"


def with_serving_certs(cleaned: str, certs: str) -> str:
    """The clean-up's line, then what became of the node's serving certificate (if asked)."""
    return f"{cleaned} {certs}" if certs else cleaned


def serving_certs_approved(node: str, names: list[str]) -> str:
    return (
        f"Approved the kubelet serving certificate of `{node}` ({', '.join(names)}): "
        f"`kubectl logs` and `kubectl exec` reach its pods."
    )


def serving_cert_already_approved(node: str, name: str) -> str:
    return f"The kubelet serving certificate of `{node}` was approved already ({name})."


def serving_csr_not_seen(node: str, target: str, seconds: float) -> str:
    return (
        f"{target}'s kubelets ask for serving certificates (serverTLSBootstrap), but `{node}`'s "
        f"request did not come within {seconds:.0f} s: until it is approved, `kubectl logs` "
        f"and `kubectl exec` on its pods fail. Find it with `{SERVING_CSRS}` (requestor "
        f"system:node:{node}), check it, then `kubectl certificate approve <name>`."
    )


def serving_csr_left_alone(name: str, why: str) -> str:
    return f"Left CSR {name} alone: {why}."


def serving_csr_approval_failed(name: str, target: str, why: str) -> str:
    return (
        f"Could not approve CSR {name} in {target} ({why}); the move stands. Approve it "
        f"by hand: `kubectl certificate approve {name}`."
    )


def serving_certs_unchecked(node: str, target: str, why: str) -> str:
    return (
        f"Could not look for `{node}`'s kubelet serving certificate request in {target} "
        f"({why}); the move stands. Look with `{SERVING_CSRS}`, then "
        f"`kubectl certificate approve <name>` for the one of system:node:{node}."
    )


def serving_csr_approval_message(request_id: str, node: str) -> str:
    """The Approved condition's message, as `kubectl describe csr` shows it."""
    return (
        f"Approved by joinops for request {request_id}: requested by node {node}, subject and "
        f"every SAN are its own."
    )


def csr_not_from_node(username: str, node: str) -> str:
    return f"it was filed by {username}, not by node {node}"


def csr_unreadable() -> str:
    return "its request is not a PEM certificate request with a valid signature"


def csr_wrong_subject(subject: str, node: str) -> str:
    return f"its subject {subject} is not system:node:{node} in organization system:nodes"


def csr_foreign_san(san: str, node: str) -> str:
    return f"SAN {san} is not an address of {node}"


def csr_forbidden_san(kind: str) -> str:
    return f"it asks for {kind} subject alternative names, which a kubelet never does"


def csr_no_san() -> str:
    return "it names no DNS name or IP address"


def csr_wrong_usages(usages: list[str]) -> str:
    return f"its usages ({', '.join(usages) or 'none'}) are not a serving certificate's"
