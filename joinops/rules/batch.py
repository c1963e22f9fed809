"""Planning a batch: many nodes, one request (stitching small clusters into a large one).

Each node is checked with the same rules as a single migration; then the batch as a whole is
judged: moving all workers of a source and *then* its last control plane is allowed even though
that control plane alone would be refused. The plan carries the order: a source's control planes
move after its workers, and its last control plane after everything else from it.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from joinops.clusters import pages
from joinops.clusters.registry import ClusterAccess
from joinops.errors import ClusterError, UsageError
from joinops.requests.asks import MigrationAsk, validate_ask
from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from joinops.requests.store import Request, RequestStore
from joinops.rules import etcdsize, handover_texts, podranges
from joinops.rules import texts as rule_texts
from joinops.rules.agentns import DEFAULT_NAMESPACE
from joinops.rules.check import (
    TargetReading,
    Verdict,
    adding,
    check,
    read_agent_namespaces,
    read_target,
)
from joinops.rules.findings import Finding, Severity, ordered, refusals
from joinops.rules.locate import Listed, locate
from joinops.settings import DEFAULT_AGENT_IMAGE


@dataclass(frozen=True)
class BatchItem:
    verdict: Verdict
    after: tuple[str, ...] = ()  # nodes that must have moved before this one

    @property
    def ask(self) -> MigrationAsk:
        return self.verdict.ask

    @property
    def is_control_plane(self) -> bool:
        return bool(self.verdict.node and self.verdict.node.is_control_plane)


@dataclass(frozen=True)
class BatchPlan:
    target: str
    items: tuple[BatchItem, ...]
    findings: tuple[Finding, ...] = field(default=())  # about the batch as a whole
    force: bool = False  # drains delete pods no controller recreates

    @property
    def forced_deletions(self) -> int:
        return sum(i.verdict.forced_deletions for i in self.items)

    @property
    def allowed(self) -> bool:
        return (
            bool(self.items)
            and not refusals(self.findings)
            and all(i.verdict.allowed for i in self.items)
        )

    @property
    def sources(self) -> list[str]:
        return sorted({i.ask.source for i in self.items})


def plan_nodes(
    nodes: list[str],
    source: str | None,
    target: str,
    role: Role,
    registry: ClusterAccess,
    force: bool = False,
    max_nodes: int | None = None,
    agent_namespace: str = DEFAULT_NAMESPACE,
    agent_image: str = DEFAULT_AGENT_IMAGE,
) -> BatchPlan:
    """`/join n1 n2 n3 [from SRC] to DST`: each node's source is looked up when not given.
    More than `max_nodes` is a UsageError before any cluster is read."""
    check_size(len(nodes), max_nodes)
    if len(set(nodes)) != len(nodes):
        raise UsageError(rule_texts.batch_duplicate_nodes())
    listed: dict[str, Listed] = {}
    if source is None:
        sources, findings, listed = locate(nodes, target, registry)
    else:
        sources, findings = dict.fromkeys(nodes, source), []
    asks = [MigrationAsk(n, sources[n], target, role, force) for n in nodes if n in sources]
    for ask in asks:
        validate_ask(ask, registry.names)
    return _judge(
        asks, target, registry, findings, force, listed, None, agent_namespace, agent_image
    )


def check_size(count: int, max_nodes: int | None, source: str = "") -> None:
    """A batch of more than `max_nodes` nodes is refused as a whole (UsageError)."""
    if max_nodes is not None and count > max_nodes:
        raise UsageError(rule_texts.batch_too_large(count, max_nodes, source))


def plan_all(
    source: str,
    target: str,
    registry: ClusterAccess,
    force: bool = False,
    max_nodes: int | None = None,
    agent_namespace: str = DEFAULT_NAMESPACE,
    agent_image: str = DEFAULT_AGENT_IMAGE,
) -> BatchPlan:
    """`/join all from SRC to DST`: every node; control planes keep their role if they can.
    A source of more than `max_nodes` nodes is a UsageError once its nodes are listed."""
    if source == target:
        validate_ask(MigrationAsk("all", source, target), registry.names)
    cluster = registry.get(source)
    reading = read_target(registry.get(target))
    try:
        listing = pages.list_all(cluster, "nodes", cluster.core.list_node)
        target_facts = reading.facts or registry.get(target).facts()  # raises what failed
    except ClusterError as e:
        return BatchPlan(
            target,
            (),
            (
                Finding(
                    Severity.REFUSAL,
                    "cluster-error",
                    rule_texts.cluster_unusable(e.cluster, e.detail),
                ),
            ),
        )
    check_size(len(listing.items), max_nodes, source)
    asks = []
    for node in sorted(listing.items, key=lambda n: str(n.metadata.name)):
        labels = node.metadata.labels or {}
        is_cp = "node-role.kubernetes.io/control-plane" in labels
        role = Role.CONTROL_PLANE if is_cp and target_facts.control_plane_endpoint else Role.WORKER
        asks.append(MigrationAsk(str(node.metadata.name), source, target, role, force))
    members = len(target_facts.control_planes)  # one etcd member per kubeadm control plane
    asks, demoted = etcdsize.fit_etcd(asks, members)
    planes = sum(
        "node-role.kubernetes.io/control-plane" in (n.metadata.labels or {}) for n in listing.items
    )
    whole = etcdsize.dismantles_etcd(source, planes, force)
    plan = _judge(asks, target, registry, whole, force, None, reading, agent_namespace, agent_image)
    return _said(plan, demoted, members)


def _said(plan: BatchPlan, demoted: set[str], members: int) -> BatchPlan:
    """Each control plane that joins as a worker says why, in the plan."""
    if not demoted:
        return plan
    planes = sum(1 for i in plan.items if i.ask.role is Role.CONTROL_PLANE)
    items = tuple(
        replace(i, verdict=adding(i.verdict, _joins_as_worker(i, members, planes)))
        if i.ask.node in demoted
        else i
        for i in plan.items
    )
    return replace(plan, items=items)


def _joins_as_worker(item: BatchItem, members: int, planes: int) -> Finding:
    text = handover_texts.batch_joins_as_worker(item.ask.node, item.ask.target, members, planes)
    return Finding(Severity.WARNING, "etcd-size", text)


def _judge(
    asks: list[MigrationAsk],
    target: str,
    registry: ClusterAccess,
    findings: list[Finding],
    force: bool,
    listed: dict[str, Listed] | None = None,
    reading: TargetReading | None = None,
    agent_namespace: str = DEFAULT_NAMESPACE,
    agent_image: str = DEFAULT_AGENT_IMAGE,
) -> BatchPlan:
    into = registry.get(target)
    reading = reading or read_target(into)  # once for the batch, not once per node
    sources = sorted({a.source for a in asks})  # and each source's agent namespace once
    agents = read_agent_namespaces([registry.get(s) for s in sources], agent_namespace)

    def one(ask: MigrationAsk) -> Verdict:
        source = registry.get(ask.source)
        return check(ask, source, into, reading, agent_namespace, agents[ask.source], agent_image)

    with ThreadPoolExecutor(8) as pool:
        verdicts = list(pool.map(one, asks))
    items: list[BatchItem] = []
    for source in sources:
        group = [v for v in verdicts if v.ask.source == source]
        items += _order_source(group, registry, findings, (listed or {}).get(source))
    fitting = [i.ask.node for i in items if i.verdict.allowed]  # in plan order
    short = podranges.shortfall(fitting, target, reading.ranges)  # no pod range left for these
    items = [
        replace(i, verdict=adding(i.verdict, short[i.ask.node])) if i.ask.node in short else i
        for i in items
    ]
    return BatchPlan(target, tuple(items), ordered(findings), force)


def _order_source(
    group: list[Verdict],
    registry: ClusterAccess,
    findings: list[Finding],
    listed: Listed | None = None,
) -> list[BatchItem]:
    """Workers first; control planes after them; the last control plane after everything."""
    source = group[0].ask.source
    moving = {v.ask.node for v in group}
    workers = [v for v in group if not (v.node and v.node.is_control_plane)]
    planes = [v for v in group if v.node and v.node.is_control_plane]
    items = [BatchItem(v) for v in workers]
    if not planes:
        return items
    if listed is not None:  # the nodes were listed to find them: no need to ask again
        emptied, remaining_planes = listed.names <= moving, len(listed.control_planes)
    else:
        emptied = _source_emptied(source, moving, registry)
        remaining_planes = _control_plane_count(source, registry)
    if len(planes) == remaining_planes > 1 and not emptied:  # one alone: its own check refuses
        findings.append(
            Finding(
                Severity.REFUSAL,
                "last-control-plane",
                rule_texts.batch_leaves_nodes_without_control_plane(source),
            )
        )
    worker_names = tuple(v.ask.node for v in workers)
    for verdict in planes[:-1]:
        items.append(BatchItem(verdict, after=worker_names))
    last = planes[-1]
    if emptied and len(planes) == remaining_planes:
        last = _batch_allows_last(last)
        before = tuple(v.ask.node for v in group if v is not planes[-1])
        items.append(BatchItem(last, after=before))
    else:
        items.append(BatchItem(last, after=worker_names))
    return items


def _batch_allows_last(verdict: Verdict) -> Verdict:
    """The last control plane moves last, once its cluster has no other node: that destroys it."""
    kept = [f for f in verdict.findings if f.code not in ("last-control-plane", "destroys-source")]
    kept.append(
        Finding(
            Severity.WARNING,
            "destroys-source",
            rule_texts.destroys_source(verdict.ask.node, verdict.ask.source),
        )
    )
    return replace(verdict, findings=ordered(kept), destroys_source=True)


def _source_emptied(source: str, moving: set[str], registry: ClusterAccess) -> bool:
    """Does the batch move every node of `source`? Reads at most len(moving) + 1 nodes."""
    cluster = registry.get(source)
    try:
        page = cluster.call("list", "nodes", cluster.core.list_node, limit=len(moving) + 1)
    except ClusterError:
        return False
    names = {n.metadata.name for n in page.items}
    return names <= moving and not page.metadata._continue


def _control_plane_count(source: str, registry: ClusterAccess) -> int:
    try:
        return len(registry.get(source).control_planes())
    except ClusterError:
        return 0


def create_batch(
    store: RequestStore,
    plan: BatchPlan,
    *,
    requester: str,
    state: State,
    decided_by: str = "",
    channel: str = "",
    message_ts: str = "",
) -> Request:
    """Store the batch and one child migration per node; children start when it advances."""
    batch = store.create(
        Request(
            id="",
            kind="batch",
            node=", ".join(i.ask.node for i in plan.items),
            source=",".join(plan.sources),
            target=plan.target,
            state=state,
            requester=requester,
            decided_by=decided_by,
            channel=channel,
            message_ts=message_ts,
            destroys_source=any(i.verdict.destroys_source for i in plan.items),
            force=plan.force,
        )
    )
    child_state = State.APPROVED if state is State.APPROVED else State.PENDING
    ids = []
    for item in plan.items:
        child = store.create(
            Request(
                id="",
                node=item.ask.node,
                source=item.ask.source,
                target=item.ask.target,
                role=item.ask.role,
                state=child_state,
                requester=requester,
                decided_by=decided_by,
                parent=batch.id,
                destroys_source=item.verdict.destroys_source,
                from_control_plane=item.is_control_plane,
                force=item.ask.force,
                extra={"after": ",".join(item.after)},
            )
        )
        ids.append(child.id)
    store.update(batch.id, **{"x:children": ",".join(ids)})
    return store.get(batch.id) or batch


def approve_children(store: RequestStore, batch: Request, approver: str) -> None:
    """Once the batch is approved, so is each of its migrations (they start when it advances)."""
    for child_id in batch.extra.get("children", "").split(","):
        if child_id:
            store.transition(child_id, State.APPROVED, decided_by=approver)


def render(plan: BatchPlan) -> str:
    """The batch as a table: node, source, versions, role, findings."""
    head = "ALLOWED" if plan.allowed else "REFUSED"
    forced = " (forced)" if plan.force else ""
    lines = [f"{head}: move {len(plan.items)} nodes to {plan.target}{forced}"]
    lines += [f"  REFUSED: {f.text}" for f in plan.findings if f.severity is Severity.REFUSAL]
    rows = [("NODE", "SOURCE", "KUBELET", "TARGET", "ROLE", "AFTER", "FINDINGS")]
    for item in plan.items:
        v = item.verdict
        rows.append(
            (
                item.ask.node,
                item.ask.source,
                str(v.node.kubelet_version) if v.node else "-",
                str(v.target.version) if v.target else "-",
                str(item.ask.role),
                ", ".join(item.after) or "-",
                "; ".join(f"{f.severity.name.lower()}: {f.code}" for f in v.findings) or "ok",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines += [
        "  " + "  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1]
        for r in rows
    ]
    for item in plan.items:
        for f in item.verdict.findings:
            if f.severity is not Severity.NOTE:
                lines.append(f"  {item.ask.node}: {f.severity.name}: {f.text}")
    return "\n".join(lines)
