"""Everything the console commands print that is not a progress line: one place, the terminal's
own words (its commands are `joinops …`, never Slack's `/join …`)."""

from __future__ import annotations

from pathlib import Path

from joinops.requests.model import Role

NO_WORKER = "No worker has started it yet: is `joinops worker` running?"


def pods_gone(gone: int, total: int) -> str:
    return f"{gone}/{total} pods gone"


def live_status(number: int, count: int, step: str, detail: str, elapsed: str) -> str:
    """The live line: `3/7 drain · 2/5 pods gone · 0:12` (no number for a batch's lines)."""
    where = f"{number}/{count} {step}" if number else step
    return " · ".join(part for part in (where or "waiting for a worker", detail, elapsed) if part)


def sandbox_needs_redis(redis_url: str, why: str) -> str:
    return (
        f"REDIS_URL: nothing answers at {redis_url} ({why}); the bot and its worker keep "
        "requests in Redis: start one (`redis-server`) or point REDIS_URL at one"
    )


def sandbox_slack_ready(url: str, config: Path, worker_log: Path) -> str:
    return (
        f"The bot is serving a simulated Slack. Open its channel: {url}\n"
        f"  as alice (a requester) type `/join a-w-1 from clusterA to clusterB`,\n"
        f"  switch to bob (the approver) and click Approve; the thread fills as it runs.\n"
        f"Hosts arrive one by one and are announced there: Move into clusterB as worker\n"
        f"  opens a request for bob to approve.\n"
        f"A worker runs the migrations (its log: {worker_log}). The terminal works too:\n"
        f"  export JOINOPS_CONFIG={config.resolve()}\n"
        f"  joinops list\n"
        f"Press Ctrl-C to stop."
    )


def bad_role(value: str) -> str:
    allowed = ", ".join(str(r) for r in Role)
    return f"{value!r} is not a role; the roles are {allowed}"


def bad_duration(value: str) -> str:
    return f"{value!r} is not a duration: use e.g. 90s, 30m, 24h or 1h30m"


def bad_seconds(value: str) -> str:
    return f"{value!r} is not a number of seconds: use 0 or more, e.g. 5 or 0.5"


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


# ---- the sandbox's arriving hosts (`joinops sandbox`) ----------------------------------------


def sandbox_host_arrived(name: str, path: Path) -> str:
    return f"Host {name} arrived: its kubeconfig is {path}"


def sandbox_hosts_all_arrived(count: int, directory: Path) -> str:
    return f"All {count} hosts have arrived in {directory} (`joinops arrivals` lists them)."
