"""The steps of a migration, in order, by stable id (see `joinops.requests.plan.STEP_IDS`).

Each step is a small function of a `Run` (workers.run) returning the line to report; each is safe
to run twice. Steps before the node agent can be undone; after it, the node has left the source.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from joinops.requests.plan import STEP_IDS
from workers import completion, hostprobe
from workers.material_steps import prepare_join_material, undo_join_material
from workers.node_steps import cleanup, cordon, drain_node, recheck, start_agent, uncordon
from workers.run import Run


@dataclass(frozen=True)
class Step:
    id: str
    run: Callable[[Run], str]
    undo: Callable[[Run], None] | None = None


STEPS: tuple[Step, ...] = (
    Step("check", recheck),
    Step("join-material", prepare_join_material, undo_join_material),
    Step("probe", hostprobe.probe),
    Step("cordon", cordon, uncordon),
    Step("drain", drain_node),
    Step("agent", start_agent),
    Step("wait-joined", completion.wait_joined),
    Step("cleanup", cleanup),
)


assert tuple(s.id for s in STEPS) == STEP_IDS, "the plan and the engine list the same steps"
