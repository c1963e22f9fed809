"""The words of arrivals: the announcement of a host, its buttons, the answers to clicks, the
reports of files joinops cannot use, and `/join arrivals`."""

from __future__ import annotations

from bot.texts.common import COMMAND, at, plain, quote, role_word, short, user

MOVE_ACTION_WORDS = "Move into {target} as {role}"
DISMISS = "Dismiss"


def title(cluster: str) -> str:
    return f":inbox_tray: *A host arrived: {plain(cluster)}*"


def fallback(cluster: str, node: str | None) -> str:
    about = f" (node {plain(node)})" if node else ""
    return f"A host arrived: {plain(cluster)}{about}"


def field_node(name: str) -> str:
    return f"*Host*\n{quote(name, 255)}"


def field_version(version: str) -> str:
    return f"*Kubernetes*\n{plain(version)}"


def field_nodes(count: int) -> str:
    return f"*Nodes*\n{count}"


def field_architecture(architecture: str) -> str:
    return f"*Architecture*\n{plain(architecture) or '?'}"


def field_cpu(cpu: str) -> str:
    return f"*CPU*\n{plain(cpu)} cores"


def field_memory(gib: float) -> str:
    return f"*Memory*\n{gib:g} GiB"


def move_label(target: str, role: str) -> str:
    return MOVE_ACTION_WORDS.format(target=target, role=role)


def allowed(node: str, target: str, role: str) -> str:
    return (
        f":white_check_mark: The rules allow moving {quote(node)} into *{target}* as a "
        f"{role_word(role)}."
    )


def refused(node: str, target: str, role: str, reasons: tuple[str, ...]) -> str:
    why = " ".join(short(r, 400) for r in reasons) or "see the rules"
    return (
        f":no_entry: The rules would refuse moving {quote(node)} into *{target}* as a "
        f"{role_word(role)}: {why}"
    )


def several_nodes(count: int, cluster: str) -> str:
    return (
        f":information_source: {count} nodes: joinops proposes a move only for a single-node host."
        f" Move them with `{COMMAND} NODE from {cluster} to TARGET`."
    )


def no_proposal(node: str, cluster: str) -> str:
    return f"Move it with `{COMMAND} {node} from {cluster} to TARGET [as ROLE]`."


def status_announced(first_seen: float, file: str) -> str:
    return f"Seen {at(first_seen)} in {quote(file, 255)}"


def status_requested(by: str, request_id: str) -> str:
    return f":hourglass_flowing_sand: {user(by)} asked to move it: `{request_id}` (see below)"


def status_moved(target: str, request_id: str) -> str:
    return f":white_check_mark: Moved into *{target}* by `{request_id}`"


def status_dismissed(by: str) -> str:
    return f"Dismissed by {user(by)}"


def invalid_file(file: str, problem: str) -> str:
    return (
        f":warning: The hosts directory's file {quote(file)} is not a usable kubeconfig: "
        f"{plain(problem)}. Fix or replace the file: joinops reads it again when it changes."
    )


def duplicate(problem: str) -> str:
    return f":warning: Hosts directory: {plain(problem)}."


# ---- answers to clicks --------------------------------------------------------------------------


def already(cluster: str, state: str, by: str, request_id: str) -> str:
    who = f" by {user(by)}" if by else ""
    req = f" (`{request_id}`)" if request_id else ""
    return f"{plain(cluster)} is already {state}{who}{req}: nothing more to do here."


def unknown_host(cluster: str) -> str:
    return (
        f"No host {quote(cluster)} has been announced. `{COMMAND} arrivals` lists the hosts seen."
    )


def no_longer_proposed(cluster: str) -> str:
    shown = plain(cluster)
    return (
        f"No move is proposed for {shown} now (`arrivals.propose` is not configured, or the "
        f"host has several nodes). Use `{COMMAND} NODE from {shown} to TARGET`."
    )


# ---- /join arrivals ------------------------------------------------------------------------------

USAGE_ARRIVALS = f"{COMMAND} arrivals"


def help_entries() -> list[tuple[str, str]]:
    return [(USAGE_ARRIVALS, "list the hosts seen in the hosts directory, and what became of each")]


def list_title(count: int, directory: str) -> str:
    return f"*Hosts seen in `{directory}` ({count})*"


def list_empty(directory: str, channel: str | None) -> str:
    where = (
        f"announced in <#{channel}> when it first answers"
        if channel
        else "recorded, not announced (no `arrivals.channel`)"
    )
    return (
        f"No host has been seen in `{directory}` yet. Each kubeconfig file dropped there "
        f"(`arrivals.directory`) is a host: {where}."
    )


def not_configured() -> str:
    return (
        "Arrivals are not configured: set `arrivals.directory` (and `arrivals.channel`, "
        "`arrivals.propose`) in joinops's configuration to hear of hosts as they come up "
        "(README, *Arrivals*)."
    )


def list_line(cluster: str, file: str, since: float, state: str, request_id: str, note: str) -> str:
    req = f" · `{request_id}`" if request_id else ""
    extra = f" · {short(note, 200)}" if note else ""
    return f"• *{plain(cluster)}* ({quote(file, 255)}) since {at(since)}: {state}{req}{extra}"
