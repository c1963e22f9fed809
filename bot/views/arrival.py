"""An arrival's announcement, from its record: facts, the proposal, the buttons or what
replaced them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.texts import arrivals as texts
from bot.views.report import ReportView
from joinops.arrivals.host import HostFacts, Proposal
from joinops.arrivals.listing import Row
from joinops.arrivals.store import Arrival, State


@dataclass(frozen=True)
class AnnouncementView:
    cluster: str  # the buttons' value
    fallback: str
    title: str
    fields: tuple[str, ...]
    proposal: str
    status: str
    move: str = ""  # the Move button's label; "" when there is no button
    dismiss: str = ""  # the Dismiss button's label; "" when there is no button


def announcement_view(arrival: Arrival) -> AnnouncementView:
    facts = HostFacts.from_json(arrival.facts)
    proposal = Proposal.from_json(arrival.proposal)
    node = facts.node if facts else None
    fields: list[str] = []
    if facts is not None:
        fields = [
            texts.field_node(node.name if node else arrival.cluster),
            texts.field_version(facts.version),
            texts.field_nodes(len(facts.nodes)),
        ]
        if node is not None:
            fields += [
                texts.field_architecture(node.architecture),
                texts.field_cpu(node.cpu),
                texts.field_memory(node.memory_gib),
            ]
    open_ = arrival.state is State.ANNOUNCED
    can_move = open_ and proposal is not None and proposal.allowed
    return AnnouncementView(
        cluster=arrival.cluster,
        fallback=texts.fallback(arrival.cluster, node.name if node else None),
        title=texts.title(arrival.cluster),
        fields=tuple(fields),
        proposal=_proposal_line(arrival, facts, proposal),
        status=_status(arrival, proposal),
        move=texts.move_label(proposal.target, proposal.role) if can_move and proposal else "",
        dismiss=texts.DISMISS if open_ else "",
    )


def _proposal_line(arrival: Arrival, facts: HostFacts | None, proposal: Proposal | None) -> str:
    if facts is not None and facts.node is None:
        return texts.several_nodes(len(facts.nodes), arrival.cluster)
    if proposal is None:
        node = facts.node.name if facts and facts.node else "NODE"
        return texts.no_proposal(node, arrival.cluster)
    if proposal.allowed:
        return texts.allowed(proposal.node, proposal.target, proposal.role)
    return texts.refused(proposal.node, proposal.target, proposal.role, proposal.reasons)


def _status(arrival: Arrival, proposal: Proposal | None) -> str:
    if arrival.state is State.REQUESTED and arrival.request_id:
        return texts.status_requested(arrival.by, arrival.request_id)
    if arrival.state is State.MOVED:
        target = proposal.target if proposal else "?"
        return texts.status_moved(target, arrival.request_id)
    if arrival.state is State.DISMISSED:
        return texts.status_dismissed(arrival.by)
    return texts.status_announced(arrival.first_seen, arrival.file)


def list_view(rows: Sequence[Row], directory: str, channel: str | None) -> ReportView:
    """`/join arrivals`: every host seen, the first seen first."""
    if not rows:
        return ReportView(title=texts.list_empty(directory, channel))
    lines = [
        texts.list_line(r.cluster, r.file, r.first_seen, r.state, r.request_id, r.note)
        for r in rows
    ]
    return ReportView(title=texts.list_title(len(rows), directory), lines=tuple(lines))


def not_configured_view() -> ReportView:
    return ReportView(title=texts.not_configured())
