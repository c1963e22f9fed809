"""Everything the console commands print that is not a progress line: one place, the terminal's
own words (its commands are `joinops …`, never Slack's `/join …`)."""

from __future__ import annotations

from joinops.requests.model import Role

NO_WORKER = "No worker has started it yet: is `joinops worker` running?"


def pods_gone(gone: int, total: int) -> str:
    return f"{gone}/{total} pods gone"


def live_status(number: int, count: int, step: str, detail: str, elapsed: str) -> str:
    """The live line: `3/7 drain · 2/5 pods gone · 0:12` (no number for a batch's lines)."""
    where = f"{number}/{count} {step}" if number else step
    return " · ".join(part for part in (where or "waiting for a worker", detail, elapsed) if part)


def bad_role(value: str) -> str:
    allowed = ", ".join(str(r) for r in Role)
    return f"{value!r} is not a role; the roles are {allowed}"


def bad_duration(value: str) -> str:
    return f"{value!r} is not a duration: use e.g. 90s, 30m, 24h or 1h30m"


def bad_seconds(value: str) -> str:
    return f"{value!r} is not a number of seconds: use 0 or more, e.g. 5 or 0.5"


def bad_priority(value: str) -> str:
    return f"{value!r} is not a priority: use idle, or a niceness from 0 to 19"


def bad_request_id(value: str) -> str:
    return (
        f"{value!r} is not a request id: ids look like req-1a2b3c4d "
        "(`joinops list` shows the active ones, `joinops status` the latest)"
    )


def unknown_request(request_id: str) -> str:
    return f"No request {request_id}: `joinops list` shows the active ones."


def no_requests() -> str:
    return "No requests yet: `joinops migrate NODE --from SRC --to DST` starts one."


def none_active() -> str:
    return "No active requests."


def cannot_cancel_kind(request_id: str, kind: str) -> str:
    return f"{request_id} is a {kind} request: cancel it in Slack (`/join cancel {request_id}`)."


def retry_only_failed(request_id: str, state: str) -> str:
    return f"{request_id} is {state}: only a failed request can be retried."


def retry_batch(request_id: str) -> str:
    return (
        f"{request_id} is a batch: run `joinops migrate` again for the nodes it did not move "
        "(`joinops status` lists them)."
    )


def retry_member(request_id: str, parent: str) -> str:
    return (
        f"{request_id} belongs to batch {parent}: run `joinops migrate` again for that node "
        "rather than retrying it alone."
    )


def retry_kind(request_id: str, kind: str) -> str:
    return f"{request_id} is a {kind} request: retry it in Slack (`/join retry {request_id}`)."


def retry_queued(request_id: str) -> str:
    return f"Retrying {request_id}: checked again by the worker, then run."


RETRY_APPROVAL = "retried and approved at the command line"


def redis_unreachable(where: str, reason: str) -> str:
    return (
        f"cannot reach Redis at {where} ({reason}). "
        "Start Redis, or point REDIS_URL at one (e.g. redis://localhost:6379/0)."
    )


# ---- loans (`joinops migrate --for`, `joinops loans`) ----------------------------------------


def lent_for(node: str, home: str, length: str) -> str:
    return (
        f"Lent for {length}: {node} moves back to {home} when that is up "
        "(`joinops loans` shows when; a running `joinops worker` moves it)."
    )


def loan_return_needs_slack() -> str:
    return (
        "policy.loan_returns_need_approval is true: a loan's return waits for an approver's "
        "click in its Slack thread, so lend from Slack (`/join NODE from SRC to DST for 8h`)"
    )


def loan_status(state: str, home: str, due: str, reason: str) -> str:
    if state == "lending":
        return f"  loan: starts when the move succeeds; then back to {home}"
    if state in ("active", "returning"):
        return f"  loan: {state}, back to {home} at {due}"
    return f"  loan: {state}. {reason}".rstrip()


def no_loans() -> str:
    return "No node is lent at the moment."


def loan_line(
    loan_id: str, node: str, home: str, borrower: str, state: str, due: str, requester: str
) -> str:
    return f"{loan_id}  {node}  {home} -> {borrower}  {state:<9}  back at {due}  by {requester}"


def loan_reason(reason: str) -> str:
    return f"    {reason}"


# ---- arrivals (`joinops arrivals`) -----------------------------------------------------------


def arrivals_not_configured() -> str:
    return (
        "Arrivals are not configured: set arrivals.directory (and arrivals.channel, "
        "arrivals.propose) in JOINOPS_CONFIG to hear of hosts as they come up (README, Arrivals)."
    )


def no_arrivals(directory: str, channel: str | None) -> str:
    where = (
        f"announced in Slack channel {channel} when it first answers"
        if channel
        else "recorded, not announced (no arrivals.channel)"
    )
    return (
        f"No host has been seen in {directory} yet. Each kubeconfig file dropped there "
        f"(arrivals.directory) is a host: {where}."
    )


def arrival_note(note: str) -> str:
    return f"    {note}"


# ---- Ctrl-C at `joinops migrate` (cli.ctrl_c) ------------------------------------------------


def ctrl_c(words: str) -> str:
    """What Ctrl-C decided, as the terminal says it (the cancel's own words, framed)."""
    return f"Ctrl-C: {words}"


def step_position(number: int, count: int, step: str, done: bool) -> str:
    return f"just past step {number}/{count} {step}" if done else f"at step {number}/{count} {step}"


def move_continues(request_id: str, node: str, target: str, position: str) -> str:
    where = f", now {position}" if position else ""
    return (
        f"Too late to cancel `{request_id}`: `{node}` is past the point of no return (its node "
        f"agent has started), so its move to {target} continues{where}. "
        f"`joinops status {request_id}` shows where it is."
    )


def batch_continues(request_id: str, nodes: list[str]) -> str:
    names = ", ".join(f"`{n}`" for n in nodes)
    if len(nodes) == 1:
        past = "is past the point of no return (its node agent has started), so its move continues"
    else:
        past = (
            "are past the point of no return (their node agents have started), so their moves "
            "continue"
        )
    return (
        f"Too late to cancel `{request_id}`: {names} {past}. "
        f"`joinops status {request_id}` shows where it is."
    )


def left_undecided(request_id: str) -> str:
    return (
        f"left before the cancel of `{request_id}` was decided: `joinops status {request_id}` "
        "shows whether it goes on."
    )


FOLLOWING_ON = "Following it here to its end; Ctrl-C again leaves at once (it goes on regardless)."
