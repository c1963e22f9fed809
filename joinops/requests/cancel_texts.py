"""The answers to a cancel, the same words in Slack (`/join cancel`) and at the terminal
(`joinops cancel`); only where to follow the request differs, by the surface answering."""

from __future__ import annotations

from collections.abc import Sequence

from joinops.requests.surface import Surface


def cancelled_now(request_id: str) -> str:
    return f"Cancelled `{request_id}` before it started: nothing was changed."


def cancelling(request_id: str, node: str, surface: Surface) -> str:
    return (
        f"Cancelling `{request_id}`: the worker stops after its current step, before the node "
        f"agent starts, and puts `{node}` back as it was. {_follow(request_id, surface)}"
    )


def cannot_cancel_agent(
    request_id: str, node: str, source: str, target: str, surface: Surface
) -> str:
    return (
        f"Too late to cancel `{request_id}`: the node agent has started on `{node}`, which is "
        f"leaving {source} for {target}, and that cannot be stopped. "
        f"{_follow(request_id, surface)} If the join fails, the outcome says where the node is "
        "and what to do."
    )


_ENDED = {  # an ended request's state, as a sentence says it happened
    "succeeded": "already succeeded",
    "failed": "already failed",
    "cancelled": "was cancelled already",
    "rejected": "was rejected already",
    "expired": "already expired",
}


def cannot_cancel_finished(request_id: str, state: str, when: str = "") -> str:
    """`when`: the time it ended, as the surface shows times ("" when not known)."""
    how = _ENDED.get(state, f"is {state}")
    at = f" at {when}" if when else ""
    return f"Request `{request_id}` {how}{at}: there is nothing to cancel."


def batch_cancelling(
    request_id: str, stopped: int, going_on: Sequence[str], surface: Surface
) -> str:
    nodes = f"{stopped} node" if stopped == 1 else f"{stopped} nodes"
    line = f"Cancelling `{request_id}`: {nodes} not yet past the point of no return stop."
    if going_on:
        names = ", ".join(f"`{n}`" for n in going_on)
        line += f" Too late for {names}: the node agent has started; they finish."
    return f"{line} {_follow(request_id, surface)}"


def _follow(request_id: str, surface: Surface) -> str:
    if surface is Surface.TERMINAL:
        return f"`joinops status {request_id}` shows where it is."
    return "The thread says how it ends."
