"""How a request ends, and where its node is then: success, failure, cancel, resume, and
the lines of a batch's summary.

Shared by the Slack thread and the terminal. Text only, no formatting markup beyond backticks; a
command to run next is named as the request's own surface spells it (joinops.requests.surface).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from joinops.requests.surface import command
from joinops.wording import minutes


def succeeded(request: Any, seconds: float) -> str:
    return (
        f"`{request.node}` moved from {request.source} to {request.target} as "
        f"{request.role} in {seconds:.0f} s."
    )


def failed(step: str, reason: str, where: str) -> str:
    return f"Failed at step `{step}`: {reason} {where}"


def internal_error(step: str) -> str:
    return f"an unexpected error in step `{step}` (the worker log has the details)."


def cancelled(request: Any) -> str:
    return (
        f"Cancelled before the node agent started: `{request.node}` stays in "
        f"{request.source}, as it was."
    )


def resumed(step: str) -> str:
    return f"Resumed after a worker restart, at step `{step}`; finished steps are not run again."


def locked(node: str, holder: str) -> str:
    return (
        f"`{node}` (or a control plane this move needs) is already being moved by request "
        f"{holder}: wait for it to finish, then retry."
    )


def where_before_agent(request: Any, cordon_restored: bool) -> str:
    state = "its schedulability restored" if cordon_restored else "as it was"
    return (
        f"Where it is: `{request.node}` is still in {request.source}, {state}; nothing "
        f"was left in {request.target}. Next: fix the cause, then "
        f"{command(request, 'retry')}."
    )


def where_agent_unconfirmed(request: Any) -> str:
    return (
        f"Where it is: not known. The node agent's creation was sent to {request.source} but "
        f"not confirmed, so it may have started: then `{request.node}` was reset and has left "
        f"{request.source}. Look for `{request.node}` with `kubectl get nodes` in "
        f"{request.target} and in {request.source}. Its bootstrap token was deleted (if "
        f"{request.target} answered), so a join still under way fails. Next: if it is Ready in "
        f"{request.target}, {command(request, 'retry')} cleans up; if it is in neither, re-join "
        f"the host with fresh material from `joinops ignition --cluster {request.target}`."
    )


def where_after_join(request: Any) -> str:
    return (
        f"Where it is: `{request.node}` is Ready in {request.target}; only the clean-up "
        f"is left. Next: {command(request, 'retry')} finishes it."
    )


def never_joined(
    request: Any,
    unit: str,
    timeout: timedelta,
    target_unreachable: bool = False,
    tokens_left: tuple[str, ...] = (),
) -> str:
    """`tokens_left`: ids of the request's bootstrap tokens that could not be deleted."""
    seen = (
        f"{request.target}'s API did not answer at the end of the wait, so whether it has "
        f"registered there is not known"
        if target_unreachable
        else f"it has not registered in {request.target}"
    )
    if tokens_left:
        secrets = ", ".join(f"kube-system/bootstrap-token-{t}" for t in tokens_left)
        token = (
            f"Its bootstrap token could not be deleted ({request.target} did not answer): "
            f"delete Secret {secrets} in {request.target} once it answers (or let the "
            f"retry do it); it expires by itself."
        )
    else:
        token = "Its bootstrap token has been deleted."
    return (
        f"`{request.node}` did not become Ready in {request.target} within "
        f"{minutes(timeout)}. Where it is: the node agent reset it, so it has left "
        f"{request.source} (NotReady there), and {seen}. "
        f"How to look: on the host, `journalctl -u {unit}` shows the join; "
        f"`kubectl get nodes` in {request.target}. {token} "
        f"Next: fix the cause, then {command(request, 'retry')} (or `joinops migrate` again) to "
        f"wait for it again, or re-join the host by hand with fresh material from "
        f"`joinops ignition --cluster {request.target}`."
    )


# --- batches ---


def held(node: str, blocker: str, state: str) -> str:
    return f"`{node}` was not moved: it had to wait for `{blocker}`, which {state}."


def batch_line(node: str, state: str, outcome: str) -> str:
    return f"`{node}`: {state}. {outcome}".strip()


def batch_summary(moved: int, failed: int, skipped: int, total: int, seconds: float) -> str:
    return (
        f"Batch finished in {seconds:.0f} s: {moved} of {total} moved, {failed} failed, "
        f"{skipped} not run."
    )
