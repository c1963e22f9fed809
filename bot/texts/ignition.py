"""An Ignition request's message, its thread, and the file's direct message.

Messages are Slack mrkdwn; words the user typed are shown with `common.quote`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from bot.texts.common import COMMAND, approvers_asked, at, on, plain, role_word, user
from joinops.ignition.texts import span


def header(cluster: str, role: str) -> str:
    return f"Ignition file: a new {role_word(role)} for {cluster}"[:150]


def refused_header(cluster: str, role: str) -> str:
    return f"Refused: Ignition file for a new {role_word(role)} of {cluster}"[:150]


def fallback(requester: str, cluster: str, role: str, approvers: Sequence[str] = ()) -> str:
    return (
        f"{user(requester)} asks for an Ignition file that adds a new {role_word(role)} "
        f"to {cluster}."
    ) + approvers_asked(approvers)


def refused_fallback(requester: str, cluster: str, role: str) -> str:
    return f"Refused: {user(requester)} asked for an Ignition file for {cluster}."


def fields(requester: str, cluster: str, role: str, request_id: str) -> list[str]:
    fields = [
        f"*Requested by*\n{user(requester)}",
        f"*Cluster*\n{cluster}",
        f"*Role of the new host*\n{role_word(role)}",
    ]
    if request_id:
        fields.append(f"*Request*\n`{request_id}`")
    return fields


def validity(ttl: timedelta, control_plane: bool) -> str:
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


def delivery(requester: str, cluster: str) -> str:
    return (
        f":lock: Once approved, the file goes to {user(requester)} *by direct message*, never "
        f"to this channel: it carries a secret that can add nodes to {cluster} until it "
        "expires. This thread records who asked, who approved, when it expires and the file's "
        "SHA-256."
    )


def without_byo() -> str:
    return (
        "Made without a `byo.yaml`: no proxy, SSH key, virtual-IP pieces or extra Ignition. "
        "For those, run `joinops ignition --config byo.yaml` from a terminal."
    )


def plan(cluster: str, control_plane: bool) -> str:
    certs = " and uploads its control-plane certificates" if control_plane else ""
    return (
        f"*Plan*\n1. A worker creates a bootstrap token in {cluster}{certs}.\n"
        "2. It builds the Ignition file (spec 3.4.0); a host that boots with it joins "
        f"{cluster} on its own.\n3. I send the file privately, then forget it."
    )


def not_recorded(cluster: str) -> str:
    return (
        f"Not recorded: the Ignition file for {cluster} could not be stored (the queue/state "
        "store stopped answering). Nothing will be made; ask again in a minute."
    )


def refused_status() -> str:
    return (
        ":no_entry: Refused: nothing was made and nothing waits for approval. Fix what is said "
        f"above, then ask again with `{COMMAND}`."
    )


def made_status() -> str:
    return ":arrows_counterclockwise: Made; sending it by direct message…"


def sent_status(requester: str, valid_until: float) -> str:
    return (
        f":large_green_circle: Sent to {user(requester)} by direct message; valid until "
        f"{on(valid_until)}."
    )


def not_sent_status() -> str:
    return ":red_circle: Made but not delivered; the thread says why and what to do."


def failed_status() -> str:
    return (
        ":red_circle: No Ignition file; the thread says why. "
        f"`{COMMAND} retry` asks for approval again."
    )


def cancelled_status() -> str:
    return ":white_circle: Cancelled: nothing was made."


def approved_reply(user_id: str, timestamp: float, requester: str) -> str:
    return (
        f"Approved by {user(user_id)} at {at(timestamp)}. {user(requester)}, the file is being "
        "made; it comes to you by direct message."
    )


def progress(text: str) -> str:
    return f":information_source: {text}"


def sent_reply(
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


def dm_comment(
    cluster: str, role: str, request_id: str, approver: str, valid_until: float, digest: str
) -> str:
    return (
        f"Your Ignition file for a new {role_word(role)} of {cluster} (request `{request_id}`, "
        f"approved by {user(approver)}). Valid until {on(valid_until)}. SHA-256 `{digest}`.\n"
        f"It carries a secret that can add nodes to {cluster}: give it only to the host that "
        "boots with it, and delete your copies once the host has joined. I delete it from Slack "
        "when its token expires."
    )


def deleted_dm(filename: str, request_id: str, cluster: str, valid_until: float, now: float) -> str:
    """In the DM, once the file's token expired and the file was deleted from Slack."""
    return (
        f":wastebasket: `{filename}` (request `{request_id}`) was deleted from Slack at "
        f"{at(now)} when its token expired ({on(valid_until)}): it can no longer add nodes to "
        f"{cluster}. For another, ask again with `{COMMAND} ignition {cluster}`."
    )


def not_sent_reply(
    requester: str, why: str, valid_until: float, token_id: str, cluster: str
) -> str:
    revoke = f"revoke it with `kubeadm token delete {token_id}`, " if token_id else ""
    return (
        f":red_circle: {user(requester)} the Ignition file was made but not delivered: {why}. "
        f"I discarded it. Its bootstrap token stays valid in {cluster} until "
        f"{on(valid_until)}: {revoke}then ask again with `{COMMAND} ignition {cluster}`."
    )


def gone() -> str:
    return "it no longer waited for me (a file is kept 15 minutes at most)"


def changed() -> str:
    return "the stored file does not match the SHA-256 the worker recorded"


def slack_refused(error: str) -> str:
    return f"Slack refused the direct message or the upload (`{error}`)"


def cancelled_late() -> str:
    return "the request was cancelled while the file was being made"


def requester_not_allowed(standing: str | None) -> str:
    """`standing`: why the requester may not have it ("guest", "external", "deactivated"), or
    None when Slack could not say."""
    if standing is None:
        return "Slack could not confirm that the requester is a member of this workspace"
    return f"the requester's account is no longer a full member's ({standing}) as Slack says now"


def failed_reply(requester: str, outcome: str, request_id: str) -> str:
    said = plain(outcome.rstrip("."))
    return (
        f":red_circle: {user(requester)} {said}. `{COMMAND} retry {request_id}` "
        "asks for approval again."
    )


def cancelled_reply(requester: str, by: str) -> str:
    who = f" by {user(by)}" if by and by != requester else ""
    return (
        f":white_circle: {user(requester)} cancelled{who} before the file was made: nothing "
        "was created."
    )


def cancelled_outcome() -> str:
    return "Cancelled before the file was made: nothing was created."


def confirm_cancel_title() -> str:
    return "Cancel this Ignition file?"


def confirm_cancel(cluster: str) -> str:
    return (
        f"No file is made and nothing is created in {cluster}. This is `{COMMAND} cancel`; it "
        "works until a worker starts making the file."
    )[:300]


def confirm_cancel_yes() -> str:
    return "Cancel the file"


def cannot_cancel(request_id: str) -> str:
    return (
        f"Too late to cancel `{request_id}`: the file is being made (it takes seconds) and goes "
        "only to the requester. To make it useless, delete its bootstrap token: the thread "
        "names it."
    )
