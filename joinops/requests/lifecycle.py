"""The request state machine, in one screen.

    pending ──approve──▶ approved ──job starts──▶ running ──▶ succeeded
       │ │                  │                       │  ├───▶ returned (the join failed; the node
       │ │                  │                       │  │     is back in its source)
       │ │                  │                       │  └───▶ failed ──retry──▶ pending
       │ └─reject─▶ rejected │                       └─cancel (before the agent)─▶ cancelled
       └─timeout─▶ expired   └─cancel─▶ cancelled

`cancel` is allowed until the node agent starts; after that the move cannot be stopped. Every
transition is a compare-and-set in Redis (see `store.RequestStore.transition`), so double clicks,
two approvers at once, or a click after expiry all end in exactly one outcome.
"""

from __future__ import annotations

from enum import StrEnum


class State(StrEnum):
    PENDING = "pending"  # waiting for an approver
    APPROVED = "approved"  # approved, job enqueued
    RUNNING = "running"  # a worker is carrying it out
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    RETURNED = "returned"  # the join failed and the node went back into its source by itself
    CANCELLED = "cancelled"
    REJECTED = "rejected"
    EXPIRED = "expired"

    @property
    def is_terminal(self) -> bool:
        return self in TERMINAL

    @property
    def is_active(self) -> bool:
        return not self.is_terminal


TERMINAL = frozenset(
    {
        State.SUCCEEDED,
        State.FAILED,
        State.RETURNED,
        State.CANCELLED,
        State.REJECTED,
        State.EXPIRED,
    }
)

TRANSITIONS: dict[State, frozenset[State]] = {
    State.PENDING: frozenset({State.APPROVED, State.REJECTED, State.EXPIRED, State.CANCELLED}),
    State.APPROVED: frozenset({State.RUNNING, State.CANCELLED, State.FAILED}),
    State.RUNNING: frozenset({State.SUCCEEDED, State.FAILED, State.RETURNED, State.CANCELLED}),
    State.FAILED: frozenset({State.PENDING}),  # retry asks for approval again
    State.RETURNED: frozenset({State.PENDING}),  # so may a returned one: the node is back
    State.SUCCEEDED: frozenset(),
    State.CANCELLED: frozenset(),
    State.REJECTED: frozenset(),
    State.EXPIRED: frozenset(),
}


def sources_of(target: State) -> frozenset[State]:
    """The states from which `target` may be reached."""
    return frozenset(s for s, targets in TRANSITIONS.items() if target in targets)
