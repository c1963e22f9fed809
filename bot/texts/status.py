"""`/join status`, `/join list` and `/join clusters`.

Messages are Slack mrkdwn; words the user typed are shown with `common.quote`.
"""

from __future__ import annotations

from bot.texts.common import node_count, role_word, short, user

STEP_MARKS = {
    "pending": ":white_circle:",
    "running": ":arrows_counterclockwise:",
    "succeeded": ":white_check_mark:",
    "failed": ":x:",
    "rolled-back": ":leftwards_arrow_with_hook:",
}


def title(request_id: str, state: str) -> str:
    return f"*Request `{request_id}`*: {state}"


def facts(node: str, source: str, target: str, role: str, requester: str, decided_by: str) -> str:
    decided = f"; decided by {user(decided_by)}" if decided_by else ""
    return f"`{node}`: {source} → {target} as {role}; asked by {user(requester)}{decided}"


def outcome_line(outcome: str) -> str:
    return f"*Outcome:* {short(outcome, 2000)}"


def step_line(step: str, outcome: str, attempts: int, message: str) -> str:
    tries = f" ({attempts} attempts)" if attempts > 1 else ""
    said = f": {short(message, 200)}" if message else ""
    return f"{STEP_MARKS.get(outcome, '•')} `{step}` {outcome}{tries}{said}"


def no_steps() -> str:
    return "No step has run yet."


def list_empty() -> str:
    return "No active requests."


def list_title(count: int) -> str:
    return f"*Active requests ({count})*"


def list_line(
    request_id: str, node: str, source: str, target: str, state: str, requester: str
) -> str:
    return f"• `{request_id}` `{node}`: {source} → {target}, {state}, asked by {user(requester)}"


def clusters_title() -> str:
    return "*Clusters*"


def cluster_line(
    name: str,
    reachable: bool,
    version: str,
    nodes: int | None,
    control_planes: int | None,
    endpoint: str,
    problem: str,
) -> str:
    if not reachable:
        return f":red_circle: *{name}*: unreachable: {short(problem, 300)}"
    return (
        f":large_green_circle: *{name}*: {version}, {nodes} nodes "
        f"({control_planes} control planes), endpoint `{endpoint}`"
    )


def list_line_batch(request_id: str, count: int, target: str, state: str, requester: str) -> str:
    return f"• `{request_id}` {node_count(count)} → {target}, {state}, asked by {user(requester)}"


def list_line_ignition(request_id: str, cluster: str, role: str, state: str, requester: str) -> str:
    return (
        f"• `{request_id}` Ignition file for a new {role_word(role)} of {cluster}, {state}, "
        f"asked by {user(requester)}"
    )


def batch_facts(count: int, sources: str, target: str, requester: str, by: str) -> str:
    decided = f"; decided by {user(by)}" if by else ""
    return f"{node_count(count)}: {sources} → {target}; asked by {user(requester)}{decided}"


def batch_line(request_id: str, node: str, source: str, status: str) -> str:
    return f"• `{node}` from {source}: {status} (`{request_id}`)"


def ignition_facts(cluster: str, role: str, requester: str, by: str) -> str:
    decided = f"; decided by {user(by)}" if by else ""
    return (
        f"Ignition file for a new {role_word(role)} of {cluster}; asked by {user(requester)}"
        f"{decided}"
    )


def more_lines(count: int) -> str:
    return f"…and {count} more, not shown: one Slack message holds no more."
