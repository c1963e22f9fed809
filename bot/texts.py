"""Every user-facing string of the `/join` command: usage lines, help text, refusals.

Messages are Slack mrkdwn. Words the user typed are shown with `quote`, which keeps a
backtick or an overly long word from breaking the formatting.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

COMMAND = "/join"
ROLES = "worker|control-plane"
REQUEST_ID_EXAMPLE = "req-3f9a1c2b"
NODE_NAME_MAX = 253
NODE_LABEL_MAX = 63

# ---- usage lines: the exact form to type, without formatting --------------------------------

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
    (USAGE_IGNITION, "make an Ignition file for a new host to join CLUSTER"),
    (USAGE_STATUS, "show where a request is; without an id, your latest request"),
    (USAGE_LIST, "list the requests that are not finished"),
    (USAGE_CLUSTERS, "list the clusters I can move nodes between"),
    (USAGE_CANCEL, "cancel a request"),
    (USAGE_RETRY, "run a failed request again"),
    (USAGE_HELP, "show this help"),
)


def quote(word: str, limit: int = 60) -> str:
    """`word` as inline code, backticks removed and cut to `limit` characters."""
    clean = word.replace("`", "'")
    if len(clean) > limit:
        clean = clean[: limit - 1] + "…"
    return f"`{clean}`"


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


# ---- refusals: one function per reason ---------------------------------------------------------


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


# ---- the bot: timestamps and people ------------------------------------------------------------


def at(timestamp: float) -> str:
    """A time each reader sees in their own time zone (UTC HH:MM where Slack cannot)."""
    utc = datetime.fromtimestamp(timestamp, UTC).strftime("%H:%M")
    return f"<!date^{int(timestamp)}^{{time}}|{utc} UTC>"


def user(user_id: str) -> str:
    """A mention of a Slack user; CLI requesters (`cli:name`) are shown as they are."""
    return f"<@{user_id}>" if user_id and not user_id.startswith("cli:") else f"`{user_id or '?'}`"


def minutes(span: timedelta) -> str:
    total = int(span.total_seconds())
    if total >= 60 and total % 60 == 0:
        return f"{total // 60} min"
    return f"{total} s"


# ---- slash command replies ---------------------------------------------------------------------


def checking(node: str, source: str, target: str) -> str:
    return f"Checking `{node}` in {source} and {target}…"


def configuration_problem(detail: str) -> str:
    return f"I cannot use the cluster configuration: {detail}"


def cannot_post(channel: str, error: str) -> str:
    return (
        f"I could not post the request in <#{channel}> (Slack said `{error}`), so nothing was "
        "requested. Invite me there (`/invite @joinops`), or ask in a public channel."
    )


def internal_error() -> str:
    return (
        "Something went wrong on my side and I could not finish that; the bot's log has the "
        "details. Nothing was changed that you were not told about."
    )


def unknown_request(request_id: str) -> str:
    return f"There is no request `{request_id}`. `{USAGE_LIST}` shows the active ones."


def no_requests_of(user_id: str) -> str:
    return f"{user(user_id)} has no requests yet. `{USAGE_LIST}` shows the active ones."


# ---- the request message -----------------------------------------------------------------------

SEVERITY_MARKS = {"REFUSAL": ":no_entry:", "WARNING": ":warning:", "NOTE": ":information_source:"}
SEVERITY_WORDS = {"REFUSAL": "Refused", "WARNING": "Warning", "NOTE": "Note"}
APPROVE = "Approve"
REJECT = "Reject"


def request_header(node: str, source: str, target: str) -> str:
    return f"Move {node}: {source} → {target}"[:150]


def refused_header(node: str, source: str, target: str) -> str:
    return f"Refused: move {node}: {source} → {target}"[:150]


def request_fallback(requester: str, node: str, source: str, target: str) -> str:
    """The notification text of the request message."""
    return f"{user(requester)} asks to move `{node}` from {source} to {target}."


def refused_fallback(requester: str, node: str, source: str, target: str) -> str:
    return f"Refused: {user(requester)} asked to move `{node}` from {source} to {target}."


def fact_fields(
    requester: str,
    node: str,
    source: str,
    target: str,
    role: str,
    request_id: str,
    force: bool = False,
) -> list[str]:
    fields = [
        f"*Requested by*\n{user(requester)}",
        f"*Node*\n`{node}`",
        f"*From → to*\n{source} → {target}",
        f"*Role in {target}*\n{role}",
    ]
    if force:
        fields.append(f"*Forced*\n{FORCED_FIELD}")
    if request_id:
        fields.append(f"*Request*\n`{request_id}`")
    return fields


def finding_line(severity: str, text: str) -> str:
    return f"{SEVERITY_MARKS[severity]} *{SEVERITY_WORDS[severity]}:* {text}"


def no_findings() -> str:
    return ":white_check_mark: Every rule passes; nothing to warn about."


def versions_unknown() -> str:
    return "Versions: not compared (the node or the target could not be read)."


def plan_lines(titles: Sequence[str]) -> str:
    return "*Plan*\n" + "\n".join(f"{i}. {title}" for i, title in enumerate(titles, 1))


def refused_status() -> str:
    return (
        ":no_entry: Refused: nothing was done and nothing waits for approval. "
        f"Fix what is said above, then ask again with `{COMMAND}`."
    )


def confirm_destroy_title() -> str:
    return "Destroy the source cluster?"


def confirm_destroy(source: str) -> str:
    return f"Approving moves the last node of {source}: {source} will no longer exist."


def confirm_destroy_yes() -> str:
    return "Approve and destroy"


FORCED_FIELD = "`force`: the drain deletes pods no controller will recreate"


def pods_for_good(count: int) -> str:
    return f"{count} pod{'s' if count != 1 else ''} no controller will recreate"


def confirm_force_title(count: int) -> str:
    return f"Approve and delete {pods_for_good(count)}?"[:100]


def confirm_force(count: int, destroys: str = "") -> str:
    text = (
        f"This request was made with `force`: the drain deletes {pods_for_good(count)}. "
        f"They are gone for good. {destroys}"
    )
    return text.strip()[:300]


def confirm_force_yes() -> str:
    return "Approve and delete"


def confirm_no() -> str:
    return "Cancel"


# decision lines (where the buttons were)


def approved_by(user_id: str, timestamp: float) -> str:
    return f":white_check_mark: Approved by {user(user_id)} at {at(timestamp)}"


def rejected_by(user_id: str, timestamp: float) -> str:
    return f":no_entry_sign: Rejected by {user(user_id)} at {at(timestamp)}"


def cancelled_by(user_id: str) -> str:
    return f":heavy_multiplication_x: Cancelled by {user(user_id)}"


def not_approved_in_time() -> str:
    return ":hourglass: Nobody approved it in time."


# the one-line status at the bottom of the request message


def waiting_status(expires_at: float, retry: bool) -> str:
    again = "again " if retry else ""
    return (
        f":large_yellow_circle: Waiting {again}for an approver; expires at {at(expires_at)} "
        "if nobody decides."
    )


def queued_status() -> str:
    return ":large_blue_circle: Approved; waiting for a worker to start it."


def _step_place(number: int, total: int) -> str:
    """`step 3/7 ` for a step of the migration plan; `step ` for one it does not list."""
    return f"{number}/{total} " if number else ""


def running_status(number: int, total: int, step: str, text: str) -> str:
    place = _step_place(number, total)
    return f":arrows_counterclockwise: Running: step {place}`{step}`: {short(text)}"


def succeeded_status(outcome: str) -> str:
    return f":large_green_circle: Succeeded: {short(outcome)}"


def failed_status(step: str) -> str:
    where = f" at step `{step}`" if step else ""
    return (
        f":red_circle: Failed{where}. The thread says where the node is and what to do; "
        f"`{COMMAND} retry` runs it again from there."
    )


def cancelled_status() -> str:
    return ":white_circle: Cancelled; the node was left as it was."


def rejected_status() -> str:
    return ":white_circle: Rejected: nothing was done."


EXPIRED = "expired, not run"


def expired_status() -> str:
    return f":hourglass: This request {EXPIRED}"


def short(text: str, limit: int = 280) -> str:
    """One line of at most `limit` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


# ---- thread replies ----------------------------------------------------------------------------


def approved_reply(user_id: str, timestamp: float, requester: str) -> str:
    return (
        f"Approved by {user(user_id)} at {at(timestamp)}. {user(requester)}, your move is queued; "
        "I report each step here."
    )


def retry_reply(user_id: str, timestamp: float) -> str:
    return (
        f"Retry asked by {user(user_id)} at {at(timestamp)}: waiting for an approver again "
        "(the buttons are back on the request above). Steps that succeeded are not run again."
    )


def rejected_reply(user_id: str, timestamp: float, requester: str) -> str:
    return f"Rejected by {user(user_id)} at {at(timestamp)}. {user(requester)}, nothing was done."


def step_started(number: int, total: int, step: str, text: str) -> str:
    return f":arrow_forward: Step {_step_place(number, total)}`{step}`: {text}"


def step_succeeded(step: str, text: str, seconds: float) -> str:
    took = f" ({seconds:.1f} s)" if seconds else ""
    return f":white_check_mark: `{step}` done{took}: {text}"


def step_retrying(step: str, text: str) -> str:
    return f":repeat: `{step}`: {text}"


def step_failed(step: str, text: str) -> str:
    return f":x: `{step}` failed: {text}"


def succeeded_reply(requester: str, outcome: str) -> str:
    return f":tada: {user(requester)} done: {outcome}"


def failed_reply(requester: str, outcome: str) -> str:
    return f":red_circle: {user(requester)} {outcome}"


def cancelled_reply(requester: str, outcome: str, by: str) -> str:
    who = f" (cancelled by {user(by)})" if by and by != requester else ""
    return f":white_circle: {user(requester)} {outcome}{who}"


def expired_reply(requester: str, timeout: timedelta) -> str:
    return f":hourglass: {user(requester)} nobody approved within {minutes(timeout)}: {EXPIRED}."


# ---- approval clicks ---------------------------------------------------------------------------


def not_an_approver() -> str:
    return (
        "Only the configured approvers can approve or reject a move, and you are not one of "
        "them. Nothing changed."
    )


def no_self_approval() -> str:
    return "You asked for this move, so someone else must approve it. Nothing changed."


def already_decided(
    state: str, decided_by: str, decided_at: float, request_id: str, failed_step: str = ""
) -> str:
    who = f" by {user(decided_by)}" if decided_by else ""
    when = f" at {at(decided_at)}" if decided_at else ""
    lines = {
        "approved": f"Request `{request_id}` was already approved{who}{when}.",
        "running": f"Request `{request_id}` was already approved{who}{when} and is running.",
        "succeeded": f"Request `{request_id}` already ran and succeeded.",
        "failed": (
            f"Request `{request_id}` already ran and failed"
            + (f" at step `{failed_step}`" if failed_step else "")
            + f". `{COMMAND} retry {request_id}` asks for approval again."
        ),
        "rejected": f"Request `{request_id}` was already rejected{who}{when}.",
        "expired": f"Request `{request_id}` {EXPIRED}: nobody approved it in time.",
        "cancelled": f"Request `{request_id}` was cancelled.",
    }
    return lines.get(state, f"Request `{request_id}` is {state}.") + " Nothing changed."


def refused_at_approval(request_id: str) -> str:
    return (
        f"Request `{request_id}` failed instead of running: the check right before it stopped "
        "it (a rule that no longer allows it, or a cluster it could not reach). The thread says "
        "which."
    )


# ---- cancel and retry --------------------------------------------------------------------------


def not_allowed_to(action: str, request_id: str) -> str:
    return (
        f"Only the requester or an approver can {action} request `{request_id}`. Nothing changed."
    )


def cancelled_now(request_id: str) -> str:
    return f"Cancelled `{request_id}` before it started: nothing was done."


def cancelling(request_id: str, node: str) -> str:
    return (
        f"Cancelling `{request_id}`: the worker stops before the node agent starts and puts "
        f"`{node}` back as it was. The thread says when it is done."
    )


def cannot_cancel_agent(request_id: str, node: str, source: str, target: str) -> str:
    return (
        f"Too late to cancel `{request_id}`: the node agent has started on `{node}`, which is "
        f"leaving {source} for {target}, and that cannot be stopped. Follow the thread: if "
        "the join fails, the outcome says where the node is and what to do."
    )


def cannot_cancel_finished(request_id: str, state: str) -> str:
    return f"Request `{request_id}` is {state}; there is nothing to cancel."


def retry_only_failed(request_id: str, state: str) -> str:
    return f"Only a failed request can be retried; `{request_id}` is {state}."


def retry_asked(request_id: str) -> str:
    return (
        f"`{request_id}` waits for approval again; once approved it resumes from the step that "
        "failed."
    )


def retry_without_message(request_id: str) -> str:
    return (
        f"`{request_id}` was not requested in Slack (no request message to approve on); "
        "retry it where it was started."
    )


# ---- status, list, clusters --------------------------------------------------------------------

STEP_MARKS = {
    "pending": ":white_circle:",
    "running": ":arrows_counterclockwise:",
    "succeeded": ":white_check_mark:",
    "failed": ":x:",
    "rolled-back": ":leftwards_arrow_with_hook:",
}


def status_title(request_id: str, state: str) -> str:
    return f"*Request `{request_id}`*: {state}"


def status_facts(
    node: str, source: str, target: str, role: str, requester: str, decided_by: str
) -> str:
    decided = f"; decided by {user(decided_by)}" if decided_by else ""
    return f"`{node}`: {source} → {target} as {role}; asked by {user(requester)}{decided}"


def status_outcome(outcome: str) -> str:
    return f"*Outcome:* {short(outcome, 2000)}"


def status_step(step: str, outcome: str, attempts: int, message: str) -> str:
    tries = f" ({attempts} attempts)" if attempts > 1 else ""
    said = f": {short(message, 200)}" if message else ""
    return f"{STEP_MARKS.get(outcome, '•')} `{step}` {outcome}{tries}{said}"


def status_no_steps() -> str:
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


def surveying() -> str:
    return "Asking each cluster…"


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


def cancelling_status() -> str:
    return ":white_circle: Cancelling: the worker is putting the node back as it was."


# ---- who may ask, who may decide; the state store (bot/access.py, bot/availability.py) ---------


def mentions(ids: Sequence[str]) -> str:
    """People and user groups, as Slack shows them: `<@U…>`, `<!subteam^S…>`."""
    shown = [f"<!subteam^{i}>" if i.startswith("S") else user(i) for i in ids]
    return ", ".join(shown) if shown else "whoever runs joinops"


def channels(ids: Sequence[str]) -> str:
    return ", ".join(f"<#{i}>" for i in ids)


def not_a_requester(approvers: Sequence[str]) -> str:
    return (
        f"You may not use `{COMMAND}`: only the configured requesters may (`requesters` in the "
        f"joinops configuration), and you are not one of them. Ask {mentions(approvers)} to add "
        "you, or to ask for you. Nothing was recorded."
    )


def wrong_channel(allowed: Sequence[str]) -> str:
    return (
        f"`{COMMAND}` works only in {channels(allowed)}, not here. Ask there. Nothing was recorded."
    )


def membership_unknown(groups: Sequence[str]) -> str:
    return (
        f"I could not check whether you are in {mentions(groups)}: Slack did not list its "
        "members. Try again in a minute; if it keeps happening, the app may lack "
        "`usergroups:read`. Nothing was recorded."
    )


def not_an_approver_ask(approvers: Sequence[str]) -> str:
    return f"{not_an_approver()} The approvers are {mentions(approvers)}."


def store_unreachable() -> str:
    return (
        "I cannot take requests right now (the queue/state store is unreachable); nothing was "
        "recorded — try again in a minute."
    )


def store_lost_midway() -> str:
    return (
        "The queue/state store stopped answering while I handled this, so I could not finish "
        f"it. Try again in a minute; `{USAGE_STATUS}` then shows what was recorded."
    )


def not_recorded(node: str, source: str, target: str) -> str:
    return (
        f"Not recorded: moving `{node}` from {source} to {target} could not be stored (the "
        "queue/state store stopped answering). Nothing will run; ask again in a minute."
    )


# ---- Ignition files from Slack -----------------------------------------------------------------

ROLE_WORDS = {"worker": "worker", "control-plane": "control plane"}


def on(timestamp: float) -> str:
    """A date and time each reader sees in their own time zone (UTC where Slack cannot)."""
    utc = datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M")
    return f"<!date^{int(timestamp)}^{{date_short_pretty}} {{time}}|{utc} UTC>"


def span(duration: timedelta) -> str:
    """`2 h`, `1 h 30 min`, `45 min`."""
    total = int(duration.total_seconds())
    hours, rest = divmod(total, 3600)
    parts = [f"{hours} h" if hours else "", f"{rest // 60} min" if rest // 60 else ""]
    return " ".join(p for p in parts if p) or f"{total} s"


def role_word(role: str) -> str:
    return ROLE_WORDS.get(role, role)


def checking_cluster(cluster: str) -> str:
    return f"Checking {cluster}…"


def ignition_header(cluster: str, role: str) -> str:
    return f"Ignition file: a new {role_word(role)} for {cluster}"[:150]


def ignition_refused_header(cluster: str, role: str) -> str:
    return f"Refused: Ignition file for a new {role_word(role)} of {cluster}"[:150]


def ignition_fallback(requester: str, cluster: str, role: str) -> str:
    return (
        f"{user(requester)} asks for an Ignition file that adds a new {role_word(role)} "
        f"to {cluster}."
    )


def ignition_refused_fallback(requester: str, cluster: str, role: str) -> str:
    return f"Refused: {user(requester)} asked for an Ignition file for {cluster}."


def ignition_fields(requester: str, cluster: str, role: str, request_id: str) -> list[str]:
    fields = [
        f"*Requested by*\n{user(requester)}",
        f"*Cluster*\n{cluster}",
        f"*Role of the new host*\n{role_word(role)}",
    ]
    if request_id:
        fields.append(f"*Request*\n`{request_id}`")
    return fields


def ignition_validity(ttl: timedelta, control_plane: bool) -> str:
    line = (
        f"*Valid for* {span(ttl)} from when it is made: the lifetime of the bootstrap token "
        "it carries"
    )
    if control_plane:
        line += (
            ", and no longer than 2 h after the control-plane certificates are uploaded "
            "(kubeadm deletes them then; another control-plane upload to the cluster ends it "
            "sooner)"
        )
    return line + "."


def ignition_delivery(requester: str, cluster: str) -> str:
    return (
        f":lock: Once approved, the file goes to {user(requester)} *by direct message*, never "
        f"to this channel: it carries a secret that can add nodes to {cluster} until it "
        "expires. This thread records who asked, who approved, when it expires and the file's "
        "SHA-256."
    )


def ignition_without_byo() -> str:
    return (
        "Made without a `byo.yaml`: no proxy, SSH key, virtual-IP pieces or extra Ignition. "
        "For those, run `joinops ignition --config byo.yaml` from a terminal."
    )


def ignition_plan(cluster: str, control_plane: bool) -> str:
    certs = " and uploads its control-plane certificates" if control_plane else ""
    return (
        f"*Plan*\n1. A worker creates a bootstrap token in {cluster}{certs}.\n"
        "2. It builds the Ignition file (spec 3.4.0); a host that boots with it joins "
        f"{cluster} on its own.\n3. I send the file privately, then forget it."
    )


def ignition_not_recorded(cluster: str) -> str:
    return (
        f"Not recorded: the Ignition file for {cluster} could not be stored (the queue/state "
        "store stopped answering). Nothing will be made; ask again in a minute."
    )


def ignition_refused_status() -> str:
    return (
        ":no_entry: Refused: nothing was made and nothing waits for approval. Fix what is said "
        f"above, then ask again with `{COMMAND}`."
    )


def ignition_made_status() -> str:
    return ":arrows_counterclockwise: Made; sending it by direct message…"


def ignition_sent_status(requester: str, valid_until: float) -> str:
    return (
        f":large_green_circle: Sent to {user(requester)} by direct message; valid until "
        f"{on(valid_until)}."
    )


def ignition_not_sent_status() -> str:
    return ":red_circle: Made but not delivered; the thread says why and what to do."


def ignition_failed_status() -> str:
    return (
        ":red_circle: No Ignition file; the thread says why. "
        f"`{COMMAND} retry` asks for approval again."
    )


def ignition_cancelled_status() -> str:
    return ":white_circle: Cancelled: nothing was made."


def ignition_approved_reply(user_id: str, timestamp: float, requester: str) -> str:
    return (
        f"Approved by {user(user_id)} at {at(timestamp)}. {user(requester)}, the file is being "
        "made; it comes to you by direct message."
    )


def ignition_progress(text: str) -> str:
    return f":information_source: {text}"


def ignition_sent_reply(
    requester: str,
    approver: str,
    filename: str,
    size: int,
    valid_until: float,
    digest: str,
    token_id: str,
    cluster: str,
) -> str:
    revoke = (
        f" Revoke it early: `kubeadm token delete {token_id}` on a control plane of {cluster}."
        if token_id
        else ""
    )
    return (
        f":tada: {user(requester)} your Ignition file `{filename}` ({size} bytes) is in your "
        f"direct messages. Asked by {user(requester)}, approved by {user(approver)}. "
        f"Valid until {on(valid_until)}. SHA-256 `{digest}`.{revoke}"
    )


def ignition_dm_comment(
    cluster: str, role: str, request_id: str, approver: str, valid_until: float, digest: str
) -> str:
    return (
        f"Your Ignition file for a new {role_word(role)} of {cluster} (request `{request_id}`, "
        f"approved by {user(approver)}). Valid until {on(valid_until)}. SHA-256 `{digest}`.\n"
        f"It carries a secret that can add nodes to {cluster}: give it only to the host that "
        "boots with it, and delete it once the host has joined."
    )


def ignition_not_sent_reply(
    requester: str, why: str, valid_until: float, token_id: str, cluster: str
) -> str:
    revoke = f"revoke it with `kubeadm token delete {token_id}`, " if token_id else ""
    return (
        f":red_circle: {user(requester)} the Ignition file was made but not delivered: {why}. "
        f"I discarded it. Its bootstrap token stays valid in {cluster} until "
        f"{on(valid_until)}: {revoke}then ask again with `{COMMAND} ignition {cluster}`."
    )


def ignition_gone() -> str:
    return "it no longer waited for me (a file is kept 15 minutes at most)"


def ignition_changed() -> str:
    return "the stored file does not match the SHA-256 the worker recorded"


def ignition_slack_refused(error: str) -> str:
    return f"Slack refused the direct message or the upload (`{error}`)"


def ignition_cancelled_late() -> str:
    return "the request was cancelled while the file was being made"


def ignition_failed_reply(requester: str, outcome: str, request_id: str) -> str:
    return (
        f":red_circle: {user(requester)} {outcome.rstrip('.')}. `{COMMAND} retry {request_id}` "
        "asks for approval again."
    )


def ignition_cancelled_reply(requester: str, by: str) -> str:
    who = f" by {user(by)}" if by and by != requester else ""
    return (
        f":white_circle: {user(requester)} cancelled{who} before the file was made: nothing "
        "was created."
    )


def ignition_cancelled_outcome() -> str:
    return "Cancelled before the file was made: nothing was created."


def ignition_cannot_cancel(request_id: str) -> str:
    return (
        f"Too late to cancel `{request_id}`: the file is being made (it takes seconds) and goes "
        "only to the requester. To make it useless, delete its bootstrap token: the thread "
        "names it."
    )


# ---- several nodes in one request (a batch) ----------------------------------------------------

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


def checking_nodes(count: int, target: str) -> str:
    return f"Looking for {count} nodes and checking them against {target}…"


def locating(node: str) -> str:
    return f"Looking for `{node}` in the clusters…"


def checking_all(source: str, target: str) -> str:
    return f"Checking every node of {source} against {target}…"


def node_count(count: int) -> str:
    return f"{count} node" if count == 1 else f"{count} nodes"


def batch_header(count: int, target: str) -> str:
    return f"Move {node_count(count)} to {target}"[:150]


def batch_refused_header(count: int, target: str) -> str:
    return f"Refused: move {node_count(count)} to {target}"[:150]


def batch_fallback(requester: str, count: int, sources: Sequence[str], target: str) -> str:
    moving = node_count(count)
    return f"{user(requester)} asks to move {moving} from {', '.join(sources)} to {target}."


def batch_refused_fallback(requester: str, count: int, target: str) -> str:
    return f"Refused: {user(requester)} asked to move {node_count(count)} to {target}."


def batch_fields(
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


def batch_waits_for(after: Sequence[str], source: str) -> str:
    """The WAITS FOR cell: the names when short, else how many."""
    names = ", ".join(after)
    if not after:
        return "-"
    return names if len(names) <= 28 else f"{len(after)} nodes of {source}"


def batch_findings_cell(codes: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{SEVERITY_SHORT[sev]}: {code}" for sev, code in codes) or "ok"


def batch_versions(kubelet: str, target_version: str) -> str:
    return f"{kubelet or '?'} → {target_version or '?'}"


def batch_finding_line(severity: str, node: str, text: str) -> str:
    about = f"`{node}`: " if node else ""
    return f"{SEVERITY_MARKS[severity]} *{SEVERITY_WORDS[severity]}:* {about}{text}"


def batch_no_nodes() -> str:
    return "No node to move."


def batch_order(max_parallel: int, target: str) -> str:
    return (
        f"*Order*: up to {max_parallel} nodes at once; control-plane joins into {target} one "
        "at a time, and control-plane removals from one source too; a source's control planes "
        "after its workers, its last control plane after everything else from it. A node that "
        "fails stops only the nodes that wait for it."
    )


def batch_child_status(state: str, step_line: str = "", failed_step: str = "") -> str:
    if state == "running" and step_line:
        return short(step_line, 40)
    if state == "failed" and failed_step:
        return f"failed at {failed_step}"
    return BATCH_STATUS.get(state, state)


def batch_child_step(number: int, total: int, step: str, text: str = "") -> str:
    """A running node's STATUS cell: its step, and its latest progress inside the step."""
    place = f"{number}/{total} " if number else ""
    said = f": {text}" if text else ""
    return f"{place}{step}{said}"


def batch_running_status(moved: int, running: int, failed: int, waiting: int, total: int) -> str:
    return (
        f":arrows_counterclockwise: Running: {moved} of {total} moved, {running} running, "
        f"{failed} failed, {waiting} waiting."
    )


def batch_succeeded_status(summary: str) -> str:
    return f":large_green_circle: {summary}"


def batch_failed_status(summary: str) -> str:
    return f":red_circle: {summary or 'Failed.'} The thread says which nodes and why."


def batch_cancelled_status() -> str:
    return ":white_circle: Cancelled before it started: nothing was moved."


def batch_cancelled_outcome() -> str:
    return "Cancelled before it started: nothing was moved."


def batch_cancelled_late_status(by: str, summary: str) -> str:
    return f":white_circle: Cancelled by {user(by)}. {summary}"


def batch_cancelling_status() -> str:
    return (
        ":white_circle: Cancelling: nodes not yet started will not run; nodes past the point "
        "of no return finish."
    )


def batch_refused_status() -> str:
    return (
        ":no_entry: Refused: nothing was done and nothing waits for approval. Fix what is said "
        f"above, then ask again with `{COMMAND}`."
    )


def confirm_destroy_many(sources: Sequence[str]) -> str:
    names = ", ".join(sources)
    return f"Approving moves every node of {names}: {names} will no longer exist."[:300]


def batch_approved_reply(user_id: str, timestamp: float, requester: str, count: int) -> str:
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


def batch_node_reply(state: str, text: str) -> str:
    return f"{BATCH_OUTCOME_MARKS.get(state, '•')} {text}"


def nodes_command(nodes: Sequence[str], target: str) -> str:
    return f"{COMMAND} {' '.join(nodes)} to {target}"


def batch_done_reply(requester: str, summary: str) -> str:
    return f":tada: {user(requester)} {summary}"


def batch_failed_reply(requester: str, summary: str, not_moved: Sequence[str], target: str) -> str:
    again = (
        f" Not moved: {', '.join(f'`{n}`' for n in not_moved)}. To ask again for them: "
        f"`{nodes_command(not_moved, target)}`."
        if not_moved
        else ""
    )
    return f":red_circle: {user(requester)} {summary}{again}"


def batch_cancelled_late_reply(
    requester: str, by: str, summary: str, not_moved: Sequence[str], target: str
) -> str:
    again = (
        f" Not moved: {', '.join(f'`{n}`' for n in not_moved)}. To ask again for them: "
        f"`{nodes_command(not_moved, target)}`."
        if not_moved
        else ""
    )
    return f":white_circle: {user(requester)} cancelled by {user(by)}. {summary}{again}"


def batch_cancelled_reply(requester: str, by: str) -> str:
    who = f" by {user(by)}" if by and by != requester else ""
    return f":white_circle: {user(requester)} cancelled{who} before it started: nothing was moved."


def batch_cancelled_now(request_id: str) -> str:
    return f"Cancelled `{request_id}` before it started: nothing was moved."


def batch_cancelling(request_id: str, stopped: int, going_on: Sequence[str]) -> str:
    line = (
        f"Cancelling `{request_id}`: {node_count(stopped)} not yet past the point of no return "
        "stop."
    )
    if going_on:
        names = ", ".join(f"`{n}`" for n in going_on)
        line += f" Too late for {names}: the node agent has started; they finish."
    return line + " The thread gets the summary."


def batch_not_retried(request_id: str, not_moved: Sequence[str], target: str) -> str:
    if not not_moved:
        return f"`{request_id}` moved every node; there is nothing to retry."
    return (
        f"A batch is not retried as a whole. Ask again for the nodes `{request_id}` did not "
        f"move; the rules are checked again against the clusters as they are now: "
        f"`{nodes_command(not_moved, target)}`"
    )


def batch_member_not_retried(request_id: str, batch_id: str) -> str:
    return (
        f"`{request_id}` belongs to batch `{batch_id}`: `{COMMAND} retry {batch_id}` says how "
        "to ask again for the nodes it did not move."
    )


def list_line_batch(request_id: str, count: int, target: str, state: str, requester: str) -> str:
    return f"• `{request_id}` {node_count(count)} → {target}, {state}, asked by {user(requester)}"


def list_line_ignition(request_id: str, cluster: str, role: str, state: str, requester: str) -> str:
    return (
        f"• `{request_id}` Ignition file for a new {role_word(role)} of {cluster}, {state}, "
        f"asked by {user(requester)}"
    )


def status_batch_facts(count: int, sources: str, target: str, requester: str, by: str) -> str:
    decided = f"; decided by {user(by)}" if by else ""
    return f"{node_count(count)}: {sources} → {target}; asked by {user(requester)}{decided}"


def status_batch_line(request_id: str, node: str, source: str, status: str) -> str:
    return f"• `{node}` from {source}: {status} (`{request_id}`)"


def status_ignition_facts(cluster: str, role: str, requester: str, by: str) -> str:
    decided = f"; decided by {user(by)}" if by else ""
    return (
        f"Ignition file for a new {role_word(role)} of {cluster}; asked by {user(requester)}"
        f"{decided}"
    )
