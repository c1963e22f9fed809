"""The `/join` grammar's words: usage lines, the help text, and why a command does not parse.

Messages are Slack mrkdwn; words the user typed are shown with `common.quote`.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.texts import arrivals as arrival_texts
from bot.texts import loans as loan_texts
from bot.texts.common import COMMAND, REQUEST_ID_EXAMPLE, ROLES, quote

NODE_NAME_MAX = 253
NODE_LABEL_MAX = 63
USAGE_MIGRATE = f"{COMMAND} NODE from SOURCE to TARGET [as {ROLES}] [force]"
USAGE_MIGRATE_MANY = f"{COMMAND} NODE [NODE ...] to TARGET [as {ROLES}] [force]"
USAGE_MIGRATE_ALL = f"{COMMAND} all from SOURCE to TARGET [force]"
USAGE_IGNITION = f"{COMMAND} ignition CLUSTER [as {ROLES}]"
USAGE_STATUS = f"{COMMAND} status [REQUEST_ID]"
USAGE_LIST = f"{COMMAND} list"
USAGE_CLUSTERS = f"{COMMAND} clusters"
USAGE_CANCEL = f"{COMMAND} cancel REQUEST_ID"
USAGE_RETRY = f"{COMMAND} retry REQUEST_ID"
USAGE_HELP = f"{COMMAND} help"
HELP_ENTRIES: tuple[tuple[str, str], ...] = (
    (USAGE_MIGRATE, "move a node out of SOURCE into TARGET, as a worker unless you say otherwise"),
    (USAGE_MIGRATE_MANY, "move one or more nodes into TARGET; I find the cluster each is in"),
    (USAGE_MIGRATE_ALL, "move every node of SOURCE into TARGET, each keeping its role"),
    *loan_texts.help_entries(),
    (USAGE_IGNITION, "make an Ignition file for a new host to join CLUSTER"),
    (USAGE_STATUS, "show where a request is; without an id, your latest request"),
    (USAGE_LIST, "list the requests that are not finished"),
    (USAGE_CLUSTERS, "list the clusters I can move nodes between"),
    *arrival_texts.help_entries(),
    (USAGE_CANCEL, "cancel a request"),
    (USAGE_RETRY, "run a failed request again"),
    (USAGE_HELP, "show this help"),
)


def help_text() -> str:
    lines = [f"*{COMMAND}* moves Kubernetes nodes between clusters."]
    lines += [f"• `{usage}`: {what}" for usage, what in HELP_ENTRIES]
    lines.append(
        "Roles are `worker` (the default) and `control-plane` (also `controlplane` or `cp`). "
        f"Request ids look like `{REQUEST_ID_EXAMPLE}`. A closing `force` lets the drain "
        "delete pods no controller will recreate (as `kubectl drain --force`)."
    )
    return "\n".join(lines)


def error_reply(message: str, usage: str) -> str:
    """What the user sees when their command does not parse."""
    return f"{message}\nUsage: `{usage}`\n`{USAGE_HELP}` lists every command."


def did_you_mean(word: str, meant: str) -> str:
    return f"I don't understand {quote(word)} here. Did you mean `{meant}`?"


def expected_word(word: str, expected: str) -> str:
    return f"Expected `{expected}` here, not {quote(word)}."


def unexpected_words(words: Sequence[str]) -> str:
    return f"I don't know what to do with {quote(' '.join(words))} at the end."


def takes_no_arguments(command: str, words: Sequence[str]) -> str:
    return f"`{command}` takes nothing after it (got {quote(' '.join(words))})."


def missing_nodes() -> str:
    return "Which node? Put the node name(s) first."


def missing_target() -> str:
    return "Which cluster should it join? Add `to TARGET`."


def missing_to_before(cluster: str) -> str:
    return f"Which cluster should it join? Did you mean `to {cluster}`?"


def missing_value(after: str, placeholder: str) -> str:
    return f"Missing {placeholder} after `{after}`."


def all_needs_source() -> str:
    return "`all` needs the cluster to empty: say `from SOURCE`."


def all_takes_no_role() -> str:
    return "`all` moves each node with the role it has now; leave out `as ROLE`."


def node_too_long(node: str) -> str:
    return f"Node name {quote(node)} is {len(node)} characters long; the limit is {NODE_NAME_MAX}."


def node_uppercase(node: str) -> str:
    return (
        f"Node name {quote(node)} has capital letters; Kubernetes node names are lowercase "
        f"(try {quote(node.lower())})."
    )


def node_bad_character(node: str, char: str) -> str:
    shown = repr(char) if char.isspace() or not char.isprintable() else quote(char)
    return (
        f"Node name {quote(node)} contains {shown}; only lowercase letters, digits, "
        "`-` and `.` are allowed."
    )


def node_empty_label(node: str) -> str:
    return (
        f"Node name {quote(node)} starts or ends with a dot, or has two dots in a row; "
        "each dot-separated part must have something in it."
    )


def node_label_too_long(node: str, label: str) -> str:
    return (
        f"Part {quote(label)} of node name {quote(node)} is {len(label)} characters long; "
        f"each dot-separated part may have at most {NODE_LABEL_MAX}."
    )


def node_label_edge(node: str, label: str) -> str:
    return (
        f"Part {quote(label)} of node name {quote(node)} starts or ends with `-`; "
        "each dot-separated part must start and end with a letter or digit."
    )


def node_repeated(node: str) -> str:
    return f"Node {quote(node)} is listed more than once."


def unknown_cluster(name: str, known: Sequence[str], suggestion: str | None) -> str:
    guess = f" Did you mean `{suggestion}`?" if suggestion else ""
    listed = ", ".join(f"`{k}`" for k in known)
    return f"I don't know a cluster called {quote(name)}.{guess} Known clusters: {listed}."


def no_clusters(name: str) -> str:
    return f"I don't know a cluster called {quote(name)}: no clusters are configured yet."


def same_cluster(name: str) -> str:
    return f"`{name}` is both the source and the target; the target must be another cluster."


def unknown_role(word: str, suggestion: str | None) -> str:
    guess = f" Did you mean `{suggestion}`?" if suggestion else ""
    return (
        f"{quote(word)} is not a role.{guess} Roles: `worker` or `control-plane` "
        "(also `controlplane` or `cp`)."
    )


def missing_request_id(command: str) -> str:
    return f"`{command}` needs a request id, like `{REQUEST_ID_EXAMPLE}`."


def bad_request_id(word: str) -> str:
    return (
        f"{quote(word)} is not a request id: ids are `req-` and 8 hex digits, "
        f"like `{REQUEST_ID_EXAMPLE}`."
    )
