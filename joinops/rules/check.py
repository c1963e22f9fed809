"""The migration rules (docs: README "The rules"; source: shared/docs/migration.md).

`check()` is called when a request is made and again right before a migration acts. It reads the
clusters in a constant number of API calls (get by name, control planes by label selector, at
most two nodes for the last-control-plane rule, the control-plane mirror pods by label selector
for the etcd quorum guard, the target's cluster-info by name, the node's pods by field selector
and, only when they need them, one DaemonSet list and one PersistentVolume list: see
`podsafety`; the source's agent namespace by name, see `agentns`; the target's
kube-controller-manager mirror pod and one page of one node, see `podranges`; one node list
of the source only for a name it has no node of, to suggest the names meant) and depends on
nothing but its arguments.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from joinops.closeness import close_names
from joinops.clusters import capins, pages
from joinops.clusters.etcdmembers import EtcdPod
from joinops.clusters.kube import KubeCluster
from joinops.errors import ClusterError
from joinops.requests.asks import MigrationAsk
from joinops.requests.model import ClusterFacts, NodeFacts, Role, Version
from joinops.rules import (
    agentns,
    etcdguard,
    handover,
    handover_texts,
    history,
    podranges,
    podsafety,
)
from joinops.rules import texts as rule_texts
from joinops.rules.findings import Finding, Severity, ordered, refusals
from joinops.rules.quorum import unhealthy_peers
from joinops.settings import DEFAULT_AGENT_IMAGE

NODE_MISSING = "node-missing"  # the finding of a name the source has no node of


@dataclass(frozen=True)
class Verdict:
    ask: MigrationAsk
    findings: tuple[Finding, ...]
    node: NodeFacts | None = None
    target: ClusterFacts | None = None
    destroys_source: bool = False
    pods: podsafety.NodePods | None = None
    resident: history.Resident | None = None  # the target's node of that name, if it has one

    @property
    def unknown_node(self) -> Finding | None:
        """The refusal of a name in neither cluster: a typo to answer, not a move to judge."""
        if self.resident is not None:
            return None
        return next((f for f in self.findings if f.code == NODE_MISSING), None)

    @property
    def forced_deletions(self) -> int:
        """Pods the forced drain deletes for good (0 unless the ask is forced)."""
        return len(self.pods.lost) if self.pods is not None and self.ask.force else 0

    @property
    def allowed(self) -> bool:
        return not refusals(self.findings)

    @property
    def versions(self) -> str | None:
        """The versions compared, for display."""
        if self.node is None or self.target is None:
            return None
        return rule_texts.version_ok(
            self.ask.node, self.node.kubelet_version, self.ask.target, self.target.version
        )


@dataclass(frozen=True)
class TargetReading:
    """What every migration into one target reads alike: its facts and its cluster-info. A
    batch reads them once for all its nodes; a lone check reads them itself."""

    facts: ClusterFacts | None
    findings: tuple[Finding, ...]
    ranges: podranges.PodRanges | None = None  # its pod ranges, when it gives nodes some


def adding(verdict: Verdict, finding: Finding) -> Verdict:
    """The verdict with one more finding (a batch's, about the whole)."""
    return replace(verdict, findings=ordered([*verdict.findings, finding]))


def read_target(target: KubeCluster) -> TargetReading:
    try:
        facts = target.facts()
        ranges = podranges.read(target, facts)
    except ClusterError as e:
        return TargetReading(None, (_unusable(target.name, e),))
    return TargetReading(facts, tuple(_cluster_info(target)), ranges)


def read_agent_namespace(
    source: KubeCluster, namespace: str = agentns.DEFAULT_NAMESPACE
) -> agentns.AgentNamespace | Finding:
    """The source's agent namespace (one GET), or the refusal of a source that did not answer."""
    try:
        return agentns.read(source, namespace)
    except ClusterError as e:
        return _unusable(source.name, e)


def read_agent_namespaces(
    sources: list[KubeCluster], namespace: str
) -> dict[str, agentns.AgentNamespace | Finding]:
    """Each source's agent namespace, read once (for a batch: not once per node)."""
    with ThreadPoolExecutor(8) as pool:
        read = pool.map(lambda s: read_agent_namespace(s, namespace), sources)
        return {s.name: found for s, found in zip(sources, read, strict=True)}


def check(
    ask: MigrationAsk,
    source: KubeCluster,
    target: KubeCluster,
    reading: TargetReading | None = None,
    agent_namespace: str = agentns.DEFAULT_NAMESPACE,
    agent: agentns.AgentNamespace | Finding | None = None,
    agent_image: str = DEFAULT_AGENT_IMAGE,
) -> Verdict:
    """Every rule for one migration. Unreachable clusters become refusals, not exceptions.
    `reading`: the target as a batch read it once for all its nodes; `agent_namespace`: config
    agent.namespace; `agent`: that namespace as a batch read it once for the source;
    `agent_image`: config agent.image, the etcd member list's pod (a control plane's move)."""
    findings: list[Finding] = []
    node = source_cp = resident = None
    missing = False
    try:
        node = source.get_node(ask.node)
        missing = node is None
        if node is not None:
            # only a control plane's move reads the others (last one, etcd, quorum): a worker's
            # move saves the request
            source_cp = source.control_planes() if node.is_control_plane else []
    except ClusterError as e:
        findings.append(_unusable(source.name, e))
    reading = reading or read_target(target)
    target_facts = reading.facts
    findings.extend(reading.findings)
    if target_facts is not None:
        try:
            resident = history.read(target, ask.node)
        except ClusterError as e:
            findings.append(_unusable(target.name, e))
    findings.extend(_where_the_name_is(ask, source, missing, resident))
    destroys = False
    pods = None
    if node is not None and source_cp is not None:
        try:
            last_cp, destroys = _last_control_plane(ask, node, source_cp, source)
        except ClusterError as e:
            findings.append(_unusable(source.name, e))
        else:
            findings.extend(last_cp)
        findings.extend(_node_state(ask, node))
        findings.extend(_etcd_removal(ask, node, source_cp, destroys))
        if node.is_control_plane and any(cp.name != node.name for cp in source_cp):
            findings.extend(_handover(source, node, source_cp))  # the source stays
        etcd_pod = EtcdPod(agent_namespace, agent_image)
        findings.extend(_quorum(ask, node, source_cp, source, destroys, etcd_pod))
        try:
            pods = podsafety.classify(
                source, ask.node, podsafety.list_node_pods(source, ask.node, from_cache=True)[0]
            )
        except ClusterError as e:
            findings.append(_unusable(source.name, e))
        else:
            findings.extend(podsafety.findings(ask.node, pods, ask.force))
        agent = agent or read_agent_namespace(source, agent_namespace)
        findings.extend([agent] if isinstance(agent, Finding) else agent.findings(ask.source))
    if node is not None and reading.ranges is not None:
        findings.extend(reading.ranges.findings(ask.node, ask.target))
    if node is not None and target_facts is not None:
        findings.extend(_versions(ask, node, target_facts.version))
        findings.extend(_kubeadm_minor(ask, node, target_facts.version))
        findings.extend(_control_plane_join(ask, target_facts))
        findings.extend(_similar(ask, node, target_facts))
    return Verdict(ask, ordered(findings), node, target_facts, destroys, pods, resident)


def _where_the_name_is(
    ask: MigrationAsk, source: KubeCluster, missing: bool, resident: history.Resident | None
) -> list[Finding]:
    """The node's name in the two clusters: in the source only is the move; a node joinops
    moved into the target already is said so (never "delete it"); a name in neither gets the
    source's nodes of nearly that name."""
    if resident is not None and resident.moved_by:
        text = rule_texts.already_moved(ask.node, ask.target, resident.moved_by, resident.joined)
        return [_refuse(NODE_MISSING if missing else "already-moved", text)]
    if missing and resident is not None:
        text = rule_texts.node_missing_but_in_target(ask.node, ask.source, ask.target)
        return [_refuse(NODE_MISSING, text)]
    if missing:
        close = _close_node_names(source, ask.node)
        return [_refuse(NODE_MISSING, rule_texts.node_missing(ask.node, ask.source, close))]
    if resident is not None:
        return [_refuse("name-taken", rule_texts.name_taken(ask.node, ask.target))]
    return []


def _close_node_names(source: KubeCluster, node: str) -> list[str]:
    """The source's nodes named nearly `node` (one node list, read only for a name it lacks; in
    pages, as a source of thousands of nodes needs)."""
    try:
        listing = pages.list_all(source, "nodes", source.core.list_node)
    except ClusterError:
        return []
    return close_names(node, (str(n.metadata.name) for n in listing.items if n.metadata))


def _refuse(code: str, text: str) -> Finding:
    return Finding(Severity.REFUSAL, code, text)


def _warn(code: str, text: str) -> Finding:
    return Finding(Severity.WARNING, code, text)


def _unusable(cluster: str, error: ClusterError) -> Finding:
    return _refuse("cluster-error", rule_texts.cluster_unusable(cluster, error.detail))


def _versions(ask: MigrationAsk, node: NodeFacts, api: Version) -> list[Finding]:
    kubelet = node.kubelet_version
    args = (ask.node, kubelet, ask.target, api)
    if kubelet.major != api.major:
        return [_refuse("version-skew", rule_texts.version_other_major(*args))]
    if kubelet.minor > api.minor:
        return [_refuse("version-skew", rule_texts.version_newer(*args))]
    if api.minor - kubelet.minor > 1:
        return [_refuse("version-skew", rule_texts.version_too_old(*args))]
    return []


def _last_control_plane(
    ask: MigrationAsk, node: NodeFacts, control_planes: list[NodeFacts], source: KubeCluster
) -> tuple[list[Finding], bool]:
    others = [cp for cp in control_planes if cp.name != node.name]
    if not node.is_control_plane or others:
        return [], False
    if source.has_nodes_besides(node.name):
        text = rule_texts.last_control_plane_with_workers(ask.node, ask.source)
        return [_refuse("last-control-plane", text)], False
    return [_warn("destroys-source", rule_texts.destroys_source(ask.node, ask.source))], True


def _control_plane_join(ask: MigrationAsk, target: ClusterFacts) -> list[Finding]:
    if ask.role is not Role.CONTROL_PLANE:
        return []
    if not target.control_plane_endpoint:
        return [
            _refuse(
                "no-control-plane-endpoint", rule_texts.needs_control_plane_endpoint(ask.target)
            )
        ]
    members = len(target.control_planes) + 1
    found = []
    if members > handover_texts.MAX_ETCD_MEMBERS:  # etcd's FAQ: at most seven members
        found.append(_warn("etcd-size", handover_texts.etcd_past_seven(ask.target, members)))
    if members % 2 == 0:
        found.append(_warn("etcd-even", rule_texts.etcd_even_after_join(ask.target, members)))
    return found


def _handover(
    source: KubeCluster, node: NodeFacts, control_planes: list[NodeFacts]
) -> list[Finding]:
    try:
        return handover.findings(source, node, control_planes)
    except ClusterError as e:
        return [_unusable(source.name, e)]


def _etcd_removal(
    ask: MigrationAsk, node: NodeFacts, control_planes: list[NodeFacts], destroys: bool
) -> list[Finding]:
    if not node.is_control_plane or destroys:
        return []
    remaining = len([cp for cp in control_planes if cp.name != node.name])
    if remaining == 1 and ask.force:
        return [_warn("etcd-two-to-one", rule_texts.etcd_two_to_one_forced(ask.node, ask.source))]
    if remaining == 1:  # etcd's docs: removing a member of a two-member cluster is unsafe
        return [_refuse("etcd-two-to-one", rule_texts.etcd_two_to_one(ask.node, ask.source))]
    if remaining > 0 and remaining % 2 == 0:
        text = rule_texts.etcd_even_after_removal(ask.node, ask.source, remaining)
        return [_warn("etcd-even", text)]
    return []


def _cluster_info(target: KubeCluster) -> list[Finding]:
    """The node finds and trusts the target through kube-public/cluster-info: it must be there."""
    try:
        capins.read(target)
    except capins.ClusterInfoProblem as e:
        return [_refuse("cluster-info", str(e))]
    return []


def _quorum(
    ask: MigrationAsk,
    node: NodeFacts,
    control_planes: list[NodeFacts],
    source: KubeCluster,
    destroys: bool,
    etcd_pod: EtcdPod,
) -> list[Finding]:
    """Every other control plane, and its etcd and kube-apiserver, must be Ready; and every
    other etcd member, as etcd's own member list shows it (`etcdguard`)."""
    if not node.is_control_plane or destroys or len(control_planes) < 2:
        return []  # no other control plane: nothing to list (the last one has its own rule)
    try:
        pods = source.control_plane_pods()
        problems = unhealthy_peers(source, node.name, control_planes, pods)
    except ClusterError as e:
        return [_unusable(source.name, e)]
    if problems:  # refused already: no need to ask etcd
        text = rule_texts.quorum_at_risk(ask.node, ask.source, problems)
        return [_refuse("etcd-quorum", text)]
    unread, members = etcdguard.check(source, node.name, control_planes, pods, etcd_pod)
    if unread:
        text = rule_texts.etcd_members_unreadable(ask.node, ask.source, unread)
        return [_refuse("etcd-members-unreadable", text)]
    if members:
        text = rule_texts.etcd_members_at_risk(ask.node, ask.source, members)
        return [_refuse("etcd-members", text)]
    return []


def _kubeadm_minor(ask: MigrationAsk, node: NodeFacts, api: Version) -> list[Finding]:
    """kubeadm: a control-plane join needs kubeadm of the control plane's minor."""
    kubelet = node.kubelet_version
    if ask.role is Role.CONTROL_PLANE and (kubelet.major, kubelet.minor + 1) == (
        api.major,
        api.minor,
    ):
        text = rule_texts.control_plane_one_minor_behind(ask.node, kubelet, ask.target, api)
        return [_warn("kubeadm-minor-behind", text)]
    return []


def _node_state(ask: MigrationAsk, node: NodeFacts) -> list[Finding]:
    found = []
    if not node.ready:
        found.append(_warn("node-not-ready", rule_texts.node_not_ready(ask.node, ask.source)))
    if node.unschedulable:
        found.append(
            Finding(
                Severity.NOTE, "already-cordoned", rule_texts.node_cordoned(ask.node, ask.source)
            )
        )
    was = Role.CONTROL_PLANE if node.is_control_plane else Role.WORKER
    if was is not ask.role:
        found.append(
            Finding(
                Severity.NOTE,
                "role-change",
                rule_texts.role_change(ask.node, was, ask.role, ask.target),
            )
        )
    return found


def _similar(ask: MigrationAsk, node: NodeFacts, target: ClusterFacts) -> list[Finding]:
    """Architecture, OS and runtime should match the target's control planes."""
    found = []
    aspects = (
        ("architecture", lambda n: n.architecture),
        ("operating system", lambda n: n.operating_system),
        ("container runtime", lambda n: n.runtime_name),
    )
    for what, read in aspects:
        theirs = sorted({read(cp) for cp in target.control_planes})
        if theirs and read(node) not in theirs:
            text = rule_texts.mismatch(what, ask.node, read(node), ask.target, ", ".join(theirs))
            found.append(_warn("dissimilar", text))
    return found
