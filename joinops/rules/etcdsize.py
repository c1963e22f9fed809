"""etcd's size when whole clusters move (`all from A to B`): the target's member count kept odd
and at most seven (etcd's FAQ), the rest joining as workers; and a source whose control planes
all leave passes through two members to one on the way (refused unless forced, as a single
2 -> 1 move is)."""

from __future__ import annotations

from dataclasses import replace

from joinops.requests.asks import MigrationAsk
from joinops.requests.model import Role
from joinops.rules import handover_texts
from joinops.rules.findings import Finding, Severity


def dismantles_etcd(source: str, planes: int, force: bool) -> list[Finding]:
    """Moving every control plane of a source of two or more takes its etcd from two members
    to one on the way: refused unless forced, as a single such move is."""
    if planes < 2:
        return []
    if force:
        text = handover_texts.all_takes_etcd_two_to_one_forced(source, planes)
        return [Finding(Severity.WARNING, "etcd-two-to-one", text)]
    text = handover_texts.all_takes_etcd_two_to_one(source, planes)
    return [Finding(Severity.REFUSAL, "etcd-two-to-one", text)]


def control_planes_that_fit(members: int, offered: int) -> int:
    """How many of `offered` control planes may join a target of `members` etcd members:
    the most that leave it odd and at most seven (etcd's FAQ); 0 when none does."""
    fits = [
        k
        for k in range(offered + 1)
        if (members + k) % 2 == 1 and members + k <= handover_texts.MAX_ETCD_MEMBERS
    ]
    return max(fits, default=0)


def fit_etcd(asks: list[MigrationAsk], members: int) -> tuple[list[MigrationAsk], set[str]]:
    """The control planes beyond what fits the target's etcd join as workers (the last ones)."""
    planes = [a for a in asks if a.role is Role.CONTROL_PLANE]
    keep = control_planes_that_fit(members, len(planes))
    demoted = {a.node for a in planes[keep:]}
    fitted = [replace(a, role=Role.WORKER) if a.node in demoted else a for a in asks]
    return fitted, demoted
