"""Which pods a drain of one node would lose, classified as `kubectl drain` does (its filters).

The rules show the result before approval; the drain applies it again right before it evicts.

- DaemonSet pods (controller reference to a DaemonSet that exists) and mirror pods are left.
- Succeeded and Failed pods are deleted: nothing runs in them any more.
- A pod without a controller is deleted and never recreated: refused unless forced.
- A pod whose PersistentVolumeClaim is bound to a node-local PersistentVolume (`local`, or
  `hostPath` with required node affinity to this node, or a CSI volume whose required node
  affinity names this node alone, as TopoLVM's and OpenEBS LocalPV's do) could not run anywhere
  else: refused unless forced.
- A pod with an emptyDir volume loses that data: a warning.
- A pod already being deleted is waited for, whatever it is.

Reads: one pod list by field selector `spec.nodeName`; one DaemonSet list only when a pod names
a DaemonSet as its controller; one PersistentVolume list only when a pod mounts a claim; each
in pages of 500 (`clusters/pages.py`). The count grows with the cluster's DaemonSets and volumes
by one request per 500, never with its pods or nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubernetes import client

from joinops.clusters import pages
from joinops.clusters.kube import KubeCluster
from joinops.rules import texts as rule_texts
from joinops.rules.findings import Finding, Severity

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
HOSTNAME_LABEL = "kubernetes.io/hostname"
FINISHED_PHASES = ("Succeeded", "Failed")


@dataclass
class NodePods:
    """The pods of one node, by what a drain does to them (names are `namespace/name`)."""

    evict: list[Any] = field(default_factory=list)  # V1Pod objects the drain evicts
    terminating: list[Any] = field(default_factory=list)  # already being deleted: waited for
    left: list[str] = field(default_factory=list)  # DaemonSet and mirror pods
    uncontrolled: list[str] = field(default_factory=list)  # deleted, never recreated
    pinned: list[tuple[str, str]] = field(default_factory=list)  # (pod, volume) on a local PV
    empty_dir: list[str] = field(default_factory=list)  # their emptyDir data is lost

    @property
    def lost(self) -> list[str]:
        """Pods a drain deletes for good: no controller, or data only this node has."""
        return sorted({*self.uncontrolled, *(pod for pod, _ in self.pinned)})

    def blocks(self, force: bool) -> bool:
        return bool(self.lost) and not force


def pod_key(pod: Any) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


def list_node_pods(
    cluster: KubeCluster, node: str, from_cache: bool = False
) -> tuple[list[Any], str]:
    """The node's pods and the list's resourceVersion (in pages of 500: a node rarely has more).

    `from_cache`: served from the API server's watch cache (`resourceVersion=0`), cheap and
    possibly a little stale, for the rules' preview: the drain classifies the pods again right
    before it evicts. The drain itself reads consistently (the default): the pods it evicts, and
    its last look that the node is empty before the node agent resets it, must not miss a pod
    scheduled a moment ago.
    """
    listing = pages.list_all(
        cluster,
        f"pods on {node}",
        cluster.core.list_pod_for_all_namespaces,
        field_selector=f"spec.nodeName={node}",
        resource_version="0" if from_cache else None,
    )
    return listing.items, listing.resource_version


def classify(cluster: KubeCluster, node: str, pods: list[Any]) -> NodePods:
    """Sort `pods` (on `node`) as a drain treats them; reads DaemonSets and volumes if needed."""
    daemonsets = _daemonsets(cluster) if any(_daemonset_ref(p) for p in pods) else set()
    pinned_claims = _node_local_claims(cluster, node) if any(_claims(p) for p in pods) else {}
    result = NodePods()
    for pod in pods:
        _sort(pod, daemonsets, pinned_claims, result)
    return result


MANAGED_BY = "app.kubernetes.io/managed-by"


def _sort(pod: Any, daemonsets: set[str], pinned_claims: dict[str, str], result: NodePods) -> None:
    key, phase = pod_key(pod), (pod.status.phase if pod.status else None)
    if pod.metadata.deletion_timestamp is not None:
        result.terminating.append(pod)
        return
    finished = phase in FINISHED_PHASES
    ref = _daemonset_ref(pod)
    if ref is not None and not finished and f"{pod.metadata.namespace}/{ref}" in daemonsets:
        result.left.append(key)
        return
    if MIRROR_ANNOTATION in (pod.metadata.annotations or {}):
        result.left.append(key)
        return
    if (pod.metadata.labels or {}).get(MANAGED_BY) == "joinops":
        result.left.append(key)  # joinops's own short-lived pods (probes, etcdctl) end alone
        return
    result.evict.append(pod)
    if finished:
        return
    if any(v.empty_dir is not None for v in pod.spec.volumes or []):
        result.empty_dir.append(key)
    if not _controller(pod) or ref is not None:  # a DaemonSet that is gone recreates nothing
        result.uncontrolled.append(key)
    for claim in _claims(pod):
        volume = pinned_claims.get(f"{pod.metadata.namespace}/{claim}")
        if volume is not None:
            result.pinned.append((key, volume))


def left_alone(pod: Any) -> bool:
    """A pod no drain evicts, judged from the pod alone (no read of its DaemonSet): one that
    names a DaemonSet as its controller, a mirror pod, or joinops's own."""
    return (
        _daemonset_ref(pod) is not None
        or MIRROR_ANNOTATION in (pod.metadata.annotations or {})
        or (pod.metadata.labels or {}).get(MANAGED_BY) == "joinops"
    )


def _controller(pod: Any) -> Any:
    return next((r for r in pod.metadata.owner_references or [] if r.controller), None)


def _daemonset_ref(pod: Any) -> str | None:
    ref = _controller(pod)
    return str(ref.name) if ref is not None and ref.kind == "DaemonSet" else None


def _claims(pod: Any) -> list[str]:
    return [
        str(v.persistent_volume_claim.claim_name)
        for v in pod.spec.volumes or []
        if v.persistent_volume_claim is not None
    ]


def _daemonsets(cluster: KubeCluster) -> set[str]:
    apps = client.AppsV1Api(cluster.api_client)
    listing = pages.list_all(cluster, "daemonsets", apps.list_daemon_set_for_all_namespaces)
    return {f"{d.metadata.namespace}/{d.metadata.name}" for d in listing.items}


def _node_local_claims(cluster: KubeCluster, node: str) -> dict[str, str]:
    """`namespace/claim` -> volume name, for the claims bound to a volume pinned to `node`."""
    listing = pages.list_all(cluster, "persistentvolumes", cluster.core.list_persistent_volume)
    pinned = {}
    for volume in listing.items:
        spec = volume.spec
        claim = spec.claim_ref if spec else None
        if claim is None or not _pinned_to(spec, node):
            continue
        pinned[f"{claim.namespace}/{claim.name}"] = str(volume.metadata.name)
    return pinned


def _pinned_to(spec: Any, node: str) -> bool:
    """A `local` or `hostPath` volume whose required node affinity selects `node`; or a CSI
    volume whose required node affinity names this node alone under any topology key
    (TopoLVM's `topology.topolvm.io/node`, OpenEBS LocalPV's `openebs.io/nodename` or the
    hostname label): node-local storage, where a zonal volume names zones."""
    required = spec.node_affinity.required if spec.node_affinity else None
    terms = required.node_selector_terms if required else None
    if spec.csi is not None:
        return any(_term_names_only(term, node) for term in terms or [])
    if spec.local is None and spec.host_path is None:
        return False
    return any(_term_selects(term, node) for term in terms or [])


def _term_names_only(term: Any, node: str) -> bool:
    return any(
        r.operator == "In" and list(r.values or []) == [node] for r in term.match_expressions or []
    )


def _term_selects(term: Any, node: str) -> bool:
    """Does this node selector term name `node` (by hostname label or metadata.name)?"""
    requirements = [(r, HOSTNAME_LABEL) for r in term.match_expressions or []]
    requirements += [(r, "metadata.name") for r in term.match_fields or []]
    return any(
        r.key == key and r.operator == "In" and node in (r.values or []) for r, key in requirements
    )


# --- what the rules say about them ---


def findings(node: str, pods: NodePods, force: bool) -> list[Finding]:
    """Refusals (warnings when forced) for lost pods; a warning for emptyDir data."""
    found = []
    hard = Severity.WARNING if force else Severity.REFUSAL
    if pods.uncontrolled:
        text = (
            rule_texts.forced_uncontrolled_pods(node, pods.uncontrolled)
            if force
            else rule_texts.uncontrolled_pods(node, pods.uncontrolled)
        )
        found.append(Finding(hard, "uncontrolled-pods", text))
    if pods.pinned:
        named = [f"`{pod}` (volume `{volume}`)" for pod, volume in pods.pinned]
        text = (
            rule_texts.forced_local_volume_pods(node, named)
            if force
            else rule_texts.local_volume_pods(node, named)
        )
        found.append(Finding(hard, "local-volume-pods", text))
    if pods.empty_dir:
        found.append(
            Finding(Severity.WARNING, "empty-dir", rule_texts.empty_dir_pods(node, pods.empty_dir))
        )
    return found
