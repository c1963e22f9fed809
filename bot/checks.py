"""The cluster work behind a command, asked of a worker (`joinops.asking`): the bot reads no
cluster itself, so its listeners stay free to acknowledge. Each call blocks the calling work
thread (not the ack) until a worker answers, at most `timeouts.check`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import redis

from joinops import asking
from joinops.clusters.survey import ClusterRow
from joinops.requests.asks import MigrationAsk
from joinops.requests.model import Role
from joinops.rules.batch import BatchPlan, Listed
from joinops.rules.check import Verdict
from joinops.rules.findings import Finding


class Checks:
    def __init__(self, connection: redis.Redis, timeout: float) -> None:
        self.connection = connection
        self.timeout = timeout

    def move(self, ask: MigrationAsk) -> Verdict:
        verdict: Verdict = self._ask(asking.CHECK_MOVE, ask)
        return verdict

    def locate(
        self, nodes: Sequence[str], target: str
    ) -> tuple[dict[str, str], list[Finding], dict[str, Listed]]:
        found: tuple[dict[str, str], list[Finding], dict[str, Listed]] = self._ask(
            asking.LOCATE, list(nodes), target
        )
        return found

    def plan_nodes(
        self,
        nodes: Sequence[str],
        source: str | None,
        target: str,
        role: Role,
        force: bool,
        max_nodes: int,
    ) -> BatchPlan:
        plan: BatchPlan = self._ask(
            asking.PLAN_NODES, list(nodes), source, target, role, force, max_nodes
        )
        return plan

    def plan_all(self, source: str, target: str, force: bool, max_nodes: int) -> BatchPlan:
        plan: BatchPlan = self._ask(asking.PLAN_ALL, source, target, force, max_nodes)
        return plan

    def survey(self) -> list[ClusterRow]:
        rows: list[ClusterRow] = self._ask(asking.SURVEY)
        return rows

    def ignition_refusals(self, cluster: str, role: Role) -> list[str]:
        reasons: list[str] = self._ask(asking.IGNITION_REFUSALS, cluster, role)
        return reasons

    def _ask(self, function: str, *args: object) -> Any:
        return asking.ask_a_worker(self.connection, function, *args, timeout=self.timeout)
