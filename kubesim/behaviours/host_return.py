"""A node agent whose unit can go back: what workers/agent_return.py's script does, simulated.

The agent pod's Secret carries a second JoinConfiguration (`return-config.yaml`) and its unit
writes its phases into the source's `joinops-return-<id>` ConfigMap (named in its script). When
the target join fails (kubeadm exits with an error, or the node is not Ready in the target within
the Secret's `join-seconds`), the unit writes `abandoned` unless `target-complete` is there
already (the script's merge patch carries the resourceVersion it read: the first writer wins),
resets and cleans the host again, reports `returning`, waits for `way-clear`, and joins the
source through the same checks as any join (kubeadm's "a Node ... already exists" included).

The unit's reads and writes of its record are authorised as a real API server does for a
bootstrap token: the identity `system:bootstrap:<id>` in `system:bootstrappers` and the token's
`auth-extra-groups`, allowed only by a RoleBinding in the record's namespace (`may`). Its wait
for Ready in the target works only when it asks with the kubelet's client certificate
(`kubelet-client-current.pem`): a kubeadm host need not have kubectl (`ready_check_works`).

Targets can be told to refuse a join at one phase (`JoinRefusals`), as real ones do: discovery
(cluster-info not answered), TLS bootstrap (the token not accepted), the etcd member add of a
control-plane join (etcd refuses the member: kubeadm exits after the node turned Ready), or Ready
never reached (the CNI never comes up).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubesim import objects
from kubesim.behaviours.signer import TOKEN_PREFIX, TOKEN_RE, expired, token_fields
from kubesim.kubeadm import JoinConfig, find_join_configuration
from kubesim.rbac import Attributes, bound_rules_allow
from kubesim.resources import CONFIGMAPS, PODS, ROLEBINDINGS, ROLES, SECRETS

if TYPE_CHECKING:
    from kubesim.behaviours.join_preflight import JoinAttempt
    from kubesim.protocols import SimCluster, SimWorld

RETURN_KEY = "return-config.yaml"
JOIN_SECONDS_KEY = "join-seconds"
TOKEN_KEY = "return-token"
KUBELET_CLIENT_CERT = "/var/lib/kubelet/pki/kubelet-client-current.pem"
RECORD_RE = re.compile(r"configmaps/(joinops-return-[a-z0-9-]+)")
COMPLETE, WAY_CLEAR = "target-complete", "way-clear"
PHASES = ("discovery", "tls-bootstrap", "etcd-member-add", "ready")
REFUSALS = {
    "discovery": (
        "error execution phase preflight: couldn't validate the identity of the API Server: "
        'Get "https://{endpoint}/api/v1/namespaces/kube-public/configmaps/cluster-info": '
        "context deadline exceeded"
    ),
    "tls-bootstrap": (
        "error execution phase kubelet-start: error uploading crisocket: timed out waiting for "
        "the condition: TLS bootstrap failed: the CSR was never approved"
    ),
    "etcd-member-add": (
        "error execution phase control-plane-join/etcd: error creating local etcd static pod "
        "manifest file: etcdserver: unhealthy cluster"
    ),
}


@dataclass
class WayBack:
    """What the unit needs to go back: the source, its record and its JoinConfiguration."""

    source: SimCluster
    namespace: str
    record: str
    config: JoinConfig
    join_seconds: float
    token: str = ""  # the source's return bootstrap token: the unit's credentials there
    ready_check_works: bool = True  # asks with the kubelet's certificate, not a host kubectl


def way_back(cluster: SimCluster, pod: dict[str, Any], text: str) -> WayBack | None:
    """The agent's return material, when its Secret and script carry one."""
    record = RECORD_RE.search(text)
    if record is None:
        return None
    ns = pod["metadata"]["namespace"]
    for volume in pod.get("spec", {}).get("volumes") or []:
        name = (volume.get("secret") or {}).get("secretName")
        secret = cluster.store.get(SECRETS, ns, name) if name else None
        values = objects.secret_values(secret.obj) if secret else {}
        config = find_join_configuration(values.get(RETURN_KEY, ""))
        if config is not None:
            seconds = float(values.get(JOIN_SECONDS_KEY) or 0) or 300.0
            token = values.get(TOKEN_KEY, "")
            works = KUBELET_CLIENT_CERT in text
            return WayBack(cluster, ns, record.group(1), config, seconds, token, works)
    return None


class JoinRefusals:
    """Which target refuses joins, and at which phase."""

    def __init__(self) -> None:
        self.at: dict[str, str] = {}

    def refuse(self, cluster: str, phase: str | None) -> None:
        if phase is None:
            self.at.pop(cluster, None)
            return
        if phase not in PHASES:
            raise ValueError(f"phase must be one of {', '.join(PHASES)}, not {phase!r}")
        self.at[cluster] = phase

    def before_registration(self, target: SimCluster, endpoint: str) -> str:
        phase = self.at.get(target.name, "")
        if phase in ("discovery", "tls-bootstrap"):
            return REFUSALS[phase].format(endpoint=endpoint)
        return ""


def may(back: WayBack, verb: str) -> bool:
    """Is the return token allowed `verb` on the record, by the source's RBAC?"""
    match = TOKEN_RE.match(back.token)
    if match is None:
        return False
    token_id, token_secret = match.groups()
    secret = back.source.store.get(SECRETS, "kube-system", TOKEN_PREFIX + token_id)
    values = token_fields(secret.obj) if secret else None
    if not values or values.get("token-secret") != token_secret:
        return False
    if expired(values, back.source.world.clock.time()):
        return False
    extra = [g.strip() for g in values.get("auth-extra-groups", "").split(",") if g.strip()]
    roles = [e.obj for e in back.source.store.list(ROLES, back.namespace)]
    bindings = [e.obj for e in back.source.store.list(ROLEBINDINGS, back.namespace)]
    attrs = Attributes(verb, "", "configmaps", namespace=back.namespace, name=back.record)
    groups = ["system:bootstrappers", *extra]
    return bound_rules_allow(roles, bindings, f"system:bootstrap:{token_id}", groups, attrs)


def record_data(back: WayBack) -> dict[str, str]:
    """The record as the unit reads it (nothing when it is gone, or the read is forbidden)."""
    if not may(back, "get"):
        return {}
    entry = back.source.store.get(CONFIGMAPS, back.namespace, back.record)
    return dict((entry.obj.get("data") or {}) if entry else {})


def report(back: WayBack, phase: str, message: str = "") -> bool:
    """The unit's merge patch of its record; False when the record is gone or the patch is
    forbidden."""
    if not may(back, "patch"):
        return False

    def change(obj: dict[str, Any]) -> None:
        obj.setdefault("data", {}).update({"phase": phase, phase: message})

    return back.source.store.mutate(CONFIGMAPS, back.namespace, back.record, change) is not None


def abandon(world: SimWorld, back: WayBack, why: str) -> bool:
    """The decisive mark, unless joinops confirmed the join first (one lock: first wins)."""
    with back.source.lock:
        data = record_data(back)
        if not data or COMPLETE in data:
            return False
        return report(back, "abandoned", why)


def leave(world: SimWorld, attempt: JoinAttempt, target: SimCluster | None) -> None:
    """`kubeadm reset -f` again: out of the target (if it got in), the host cleaned again."""
    host = attempt.host
    if target is not None and host.cluster == target.name:
        with target.lock:
            host.kubelet_running = False
            host.cluster = None
            target.hosts.pop(host.name, None)
            target.set_node_state(host.name, "unknown")
            for entry in target.store.list(PODS):
                if entry.obj.get("spec", {}).get("nodeName") == host.name:
                    target.store.remove(PODS, entry.meta["namespace"], entry.meta["name"])
    host.kubelet_flags = {}
    for what in attempt.cleanup:
        if what in host.leftovers:
            host.leftovers.remove(what)
    world.record_event(target.name if target else "", "host-reset", host.name, "fallback")
