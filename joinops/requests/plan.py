"""The ordered steps of a migration, by stable id. The engine runs them; `plan` shows them."""

from __future__ import annotations

from dataclasses import dataclass

from joinops.requests import step_texts
from joinops.requests.asks import MigrationAsk
from joinops.requests.model import Role

STEP_IDS = (
    "check",
    "join-material",
    "probe",
    "cordon",
    "drain",
    "agent",
    "wait-joined",
    "cleanup",
)


@dataclass(frozen=True)
class PlannedStep:
    id: str
    title: str


def plan_steps(ask: MigrationAsk) -> list[PlannedStep]:
    cert = " and control-plane certificates" if ask.role is Role.CONTROL_PLANE else ""
    return [
        PlannedStep(
            step_id,
            step_texts.STEP_TITLES[step_id].format(
                node=ask.node, source=ask.source, target=ask.target, cert=cert
            ),
        )
        for step_id in STEP_IDS
    ]
