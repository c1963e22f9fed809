"""A batch's message (several nodes in one request), its table, its thread and its answers.

Messages are Slack mrkdwn; words the user typed are shown with `common.quote`.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.texts.common import (
    COMMAND,
    FORCED_FIELD,
    SEVERITY_MARKS,
    SEVERITY_WORDS,
    approvers_asked,
    at,
    node_count,
    plain,
    short,
    user,
)

BATCH_COLUMNS = ("NODE", "FROM", "KUBELET → TARGET", "ROLE", "WAITS FOR", "FINDINGS", "STATUS")
SEVERITY_SHORT = {"REFUSAL": "refused", "WARNING": "warn", "NOTE": "note"}
BATCH_STATUS = {
    "pending": "waits for approval",
    "approved": "queued",
    "running": "running",
    "succeeded": "moved",
    "failed": "failed",
    "cancelled": "not run",
    "rejected": "rejected",
    "expired": "expired",
}


def header(count: int, target: str) -> str:
    return f"Move {node_count(count)} to {target}"[:150]


def refused_header(count: int, target: str) -> str:
    return f"Refused: move {node_count(count)} to {target}"[:150]


def fallback(
    requester: str, count: int, sources: Sequence[str], target: str, approvers: Sequence[str] = ()
) -> str:
    moving = node_count(count)
    asks = f"{user(requester)} asks to move {moving} from {', '.join(sources)} to {target}."
    return asks + approvers_asked(approvers)


def refused_fallback(requester: str, count: int, target: str) -> str:
    return f"Refused: {user(requester)} asked to move {node_count(count)} to {target}."


EACH_SOURCE = "the cluster each node came from"


def fields(
    requester: str,
    count: int,
    sources: Sequence[str],
    target: str,
    request_id: str,
    force: bool = False,
) -> list[str]:
    fields = [
        f"*Requested by*\n{user(requester)}",
        f"*Nodes*\n{count}",
        f"*From → to*\n{', '.join(sources) or '?'} → {target}",
    ]
    if force:
        fields.append(f"*Forced*\n{FORCED_FIELD}")
    if request_id:
        fields.append(f"*Request*\n`{request_id}`")
    return fields


def waits_for(after: Sequence[str], source: str) -> str:
    """The WAITS FOR cell: the names when short, else how many."""
    names = ", ".join(after)
    if not after:
        return "-"
    return names if len(names) <= 28 else f"{len(after)} nodes of {source}"


def findings_cell(codes: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{SEVERITY_SHORT[sev]}: {code}" for sev, code in codes) or "ok"


def versions(kubelet: str, target_version: str) -> str:
    return f"{kubelet or '?'} → {target_version or '?'}"


def finding_line(severity: str, node: str, text: str) -> str:
    about = f"`{node}`: " if node else ""
    return f"{SEVERITY_MARKS[severity]} *{SEVERITY_WORDS[severity]}:* {about}{plain(text)}"


def no_nodes() -> str:
    return "No node to move."


def order(max_parallel: int | None, target: str) -> str:
    """How the workers run the batch; `max_parallel` None: chosen by `auto` when it starts."""
    if max_parallel is None:
        at_once = "as many nodes at once as the workers and the target allow (`max_parallel: auto`)"
    elif max_parallel == 1:
        at_once = "one node at a time"
    else:
        at_once = f"up to {max_parallel} nodes at once"
    return (
        f"*Order*: {at_once}; control-plane joins into {target} one "
        "at a time, and control-plane removals from one source too; a source's control planes "
        "after its workers, its last control plane after everything else from it. A node that "
        "fails stops only the nodes that wait for it."
    )


def child_status(state: str, step_line: str = "", failed_step: str = "") -> str:
    if state == "running" and step_line:
        return short(step_line, 40)
    if state == "failed" and failed_step:
        return f"failed at {failed_step}"
    return BATCH_STATUS.get(state, state)


def child_step(number: int, total: int, step: str, text: str = "") -> str:
    """A running node's STATUS cell: its step, and its latest progress inside the step."""
    place = f"{number}/{total} " if number else ""
    said = f": {text}" if text else ""
    return f"{place}{step}{said}"


def running_status(moved: int, running: int, failed: int, waiting: int, total: int) -> str:
    return (
        f":arrows_counterclockwise: Running: {moved} of {total} moved, {running} running, "
        f"{failed} failed, {waiting} waiting."
    )


def succeeded_status(summary: str) -> str:
    return f":large_green_circle: {summary}"


def failed_status(summary: str) -> str:
    return f":red_circle: {summary or 'Failed.'} The thread says which nodes and why."


def cancelled_status() -> str:
    return ":white_circle: Cancelled before it started: nothing was moved."


def cancelled_outcome() -> str:
    return "Cancelled before it started: nothing was moved."


def cancelled_late_status(by: str, summary: str) -> str:
    return f":white_circle: Cancelled by {user(by)}. {summary}"


def cancelling_status() -> str:
    return (
        ":white_circle: Cancelling: nodes not yet started will not run; nodes past the point "
        "of no return finish."
    )


def refused_status() -> str:
    return (
        ":no_entry: Refused: nothing was done and nothing waits for approval. Fix what is said "
        f"above, then ask again with `{COMMAND}`."
    )


def confirm_cancel_title(count: int) -> str:
    return f"Cancel the move of {count} nodes?"


def confirm_cancel() -> str:
    return (
        "Nodes whose node agent has not started stop, and are put back as they were; nodes past "
        f"that point finish. This is `{COMMAND} cancel`."
    )


def confirm_cancel_yes() -> str:
    return "Cancel the batch"


def confirm_destroy_many(sources: Sequence[str]) -> str:
    names = ", ".join(sources)
    return f"Approving moves every node of {names}: {names} will no longer exist."[:300]


def approved_reply(user_id: str, timestamp: float, requester: str, count: int) -> str:
    return (
        f"Approved by {user(user_id)} at {at(timestamp)}. {user(requester)}, your "
        f"{node_count(count)} are queued: the table above shows where each is, and each node's "
        "outcome comes here."
    )


BATCH_OUTCOME_MARKS = {
    "succeeded": ":white_check_mark:",
    "failed": ":x:",
    "cancelled": ":fast_forward:",
    "expired": ":hourglass:",
    "rejected": ":no_entry_sign:",
}


def node_reply(state: str, text: str) -> str:
    return f"{BATCH_OUTCOME_MARKS.get(state, '•')} {text}"


def nodes_command(nodes: Sequence[str], target: str) -> str:
    return f"{COMMAND} {' '.join(nodes)} to {target}"


COMMAND_WIDTH = 2_800  # one command within one section of a message, to be copied whole


def _commands(nodes: Sequence[str], target: str) -> list[str]:
    """The `/join` commands for `nodes`: one, or as many as keep each within a section."""
    commands: list[list[str]] = [[]]
    for node in nodes:
        if commands[-1] and len(nodes_command([*commands[-1], node], target)) > COMMAND_WIDTH:
            commands.append([])
        commands[-1].append(node)
    return [nodes_command(part, target) for part in commands]


def _ask_again(not_moved: Sequence[str], target: str) -> str:
    """The end of a reply that some nodes were not moved: which, and how to ask again."""
    if not not_moved:
        return ""
    names = ", ".join(f"`{n}`" for n in not_moved)
    commands = _commands(not_moved, target)
    if len(commands) == 1 and len(names) + len(commands[0]) < COMMAND_WIDTH:
        return f" Not moved: {names}. To ask again for them: `{commands[0]}`."
    listed = "\n".join(f"`{c}`" for c in commands)
    return (
        f" Not moved: {node_count(len(not_moved))}. To ask again for them, in "
        f"{len(commands)} requests:\n{listed}"
    )


def done_reply(requester: str, summary: str) -> str:
    return f":tada: {user(requester)} {plain(summary)}"


def failed_reply(requester: str, summary: str, not_moved: Sequence[str], target: str) -> str:
    again = _ask_again(not_moved, target)
    return f":red_circle: {user(requester)} {plain(summary)}{again}"


def cancelled_late_reply(
    requester: str, by: str, summary: str, not_moved: Sequence[str], target: str
) -> str:
    again = _ask_again(not_moved, target)
    return f":white_circle: {user(requester)} cancelled by {user(by)}. {plain(summary)}{again}"


def cancelled_reply(requester: str, by: str) -> str:
    who = f" by {user(by)}" if by and by != requester else ""
    return f":white_circle: {user(requester)} cancelled{who} before it started: nothing was moved."


def cancelled_now(request_id: str) -> str:
    return f"Cancelled `{request_id}` before it started: nothing was moved."


def not_retried(request_id: str, not_moved: Sequence[str], target: str) -> str:
    if not not_moved:
        return f"`{request_id}` moved every node; there is nothing to retry."
    commands = _commands(not_moved, target)
    said = (
        f"`{commands[0]}`" if len(commands) == 1 else "\n" + "\n".join(f"`{c}`" for c in commands)
    )
    return (
        f"A batch is not retried as a whole. Ask again for the nodes `{request_id}` did not "
        f"move; the rules are checked again against the clusters as they are now: {said}"
    )


def member_not_retried(request_id: str, batch_id: str) -> str:
    return (
        f"`{request_id}` belongs to batch `{batch_id}`: `{COMMAND} retry {batch_id}` says how "
        "to ask again for the nodes it did not move."
    )


# ---- a batch too large for one message (Slack's limits: docs/slack.md) ----------------------


def more_lines(count: int) -> str:
    return f"…and {count} more: the thread lists them all."


def more_rows(count: int) -> str:
    return f"…and {node_count(count)} more: the thread has the whole table."


def table_in_thread(count: int) -> str:
    return (
        f"The table of all {node_count(count)} is in the thread: this message shows the counts "
        "and the nodes running or failed."
    )


STATE_WORDS = (
    ("succeeded", "moved"),
    ("running", "running"),
    ("failed", "failed"),
    ("waiting", "waiting"),
    ("cancelled", "not run"),
    ("rejected", "rejected"),
    ("expired", "expired"),
)


def state_counts(counts: dict[str, int]) -> str:
    """`*Nodes*: 12 moved · 3 running · 1 failed · 184 waiting`, only the states with nodes."""
    said = [f"{counts[s]} {word}" for s, word in STATE_WORDS if counts.get(s)]
    return f"*Nodes*: {' · '.join(said) or 'none'}"


def watched_title(count: int) -> str:
    return f"*Running or failed* ({count}):" if count else ""


def table_page(page: int, pages: int) -> str:
    return f"*The table*, part {page} of {pages}:"


def final_table_page(page: int, pages: int) -> str:
    return f"*Where each node ended*, part {page} of {pages}:"


def findings_in_thread() -> str:
    return "*Every finding*, in full:"
