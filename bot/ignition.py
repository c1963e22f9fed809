"""Ignition files from Slack: `/join ignition CLUSTER [as control-plane]`.

The file carries a bootstrap token (and, for a control plane, the certificate key): whoever holds
it can add nodes to the cluster until it expires. So it goes through the same approval as a
migration, and once a worker has made it (`workers.ignition.job`, which leaves it in Redis for
15 minutes) the relay hands it here on the request's final state: it is uploaded into a direct
message with the requester (`conversations.open` + `files_upload_v2`) and deleted from Redis.
When its token expires it is deleted from Slack too (`bot.ignition_expiry`), and the DM says so.
The channel's thread records who asked, who approved, the expiry and the SHA-256 — never the
file, the token or the key.

Delivery happens at most once per request (a Redis `SET NX`), only while the request is still
`succeeded` (a cancel that raced the job wins: the file is discarded), and only for the exact
bytes the worker recorded the SHA-256 of. A file that cannot be delivered is discarded too, and
the thread says until when its token stays valid and how to revoke it.

No byo.yaml from Slack: a file made here has no proxy, SSH key, virtual-IP pieces or extra
Ignition (`joinops ignition --config byo.yaml` does those). Its token lives `DEFAULT_TTL`.
"""

from __future__ import annotations

import hashlib
import logging

import redis

from bot.availability import posting
from bot.context import BotContext
from bot.ignition_expiry import FileExpiry
from bot.message import SLACK_ERRORS, RequestMessages, slack_error
from bot.render import blocks as render_blocks
from bot.render import ignition as render_ignition
from bot.texts import access as access_texts
from bot.texts import answers as answers_texts
from bot.texts import ignition as ignition_texts
from bot.views import ignition as ignition_views
from bot.views.ignition import DELIVERED, DELIVERY
from joinops.errors import ConfigError
from joinops.ignition import request as ir
from joinops.queue import enqueue_ignition
from joinops.requests.audit import Action
from joinops.requests.events import Event, EventKind
from joinops.requests.ids import new_request_id
from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from joinops.requests.store import Request

log = logging.getLogger(__name__)

SENT = "joinops:bot:ignition-sent:"  # + request id: its delivery was attempted
SENT_TTL = 7 * 86400


class Ignitions:
    def __init__(self, ctx: BotContext, msgs: RequestMessages) -> None:
        self.ctx = ctx
        self.messages = msgs
        self.expiry = FileExpiry(ctx)

    # ---- asking ----------------------------------------------------------------------------

    def ask(self, user: str, channel: str, cluster: str, role: Role) -> str | None:
        """Post the request (or its refusal) in `channel`; returns what to tell `user`, if any."""
        ctx = self.ctx
        try:
            reasons = ctx.checks.ignition_refusals(cluster, role)
        except ConfigError as e:
            return answers_texts.configuration_problem(str(e))
        if reasons:
            ctx.audit.record(
                Action.REFUSED, user, None, " ".join(reasons), target=cluster, role=str(role)
            )
            view = ignition_views.refusal_view(user, cluster, role, reasons)
            try:
                self.messages.post(channel, view.fallback, render_ignition.ignition_message(view))
            except SLACK_ERRORS as e:
                return answers_texts.cannot_post(channel, slack_error(e))
            return None
        now = ctx.clock()
        request = ir.new_request(
            cluster=cluster,
            role=role,
            requester=user,
            channel=channel,
            created_at=now,
            expires_at=now + ctx.settings.timeouts.approval.total_seconds(),
        )
        request.id = new_request_id()
        if not posting(ctx, request):  # nothing is posted that could not be recorded
            return access_texts.store_unreachable()
        try:
            request.message_ts = self.messages.post_request(request)
        except SLACK_ERRORS as e:
            return answers_texts.cannot_post(channel, slack_error(e))
        if not self._record(request):
            return access_texts.store_unreachable()
        ctx.audit.record(Action.REQUESTED, user, request, f"Ignition file for a new {role}")
        return None

    def _record(self, request: Request) -> bool:
        """Store the request whose message was just posted; if Redis is gone, the message loses
        its buttons and says so (as `bot.availability.record_posted` does for a migration)."""
        try:
            self.ctx.store.create(request)
            return True
        except redis.RedisError as e:
            log.warning("request %s not recorded: %s", request.id, e)
        text = ignition_texts.not_recorded(request.target)
        try:
            self.ctx.client.chat_update(
                channel=request.channel,
                ts=request.message_ts,
                text=text,
                blocks=render_blocks.reply(text),
            )
        except SLACK_ERRORS as e:
            log.warning("request %s: could not withdraw its message: %s", request.id, e)
        return False

    def start(self, request: Request) -> None:
        enqueue_ignition(self.ctx.redis, self.ctx.settings, request.id)

    # ---- the thread ------------------------------------------------------------------------

    def reply_for(self, event: Event, request: Request) -> str | None:
        """The thread reply for one of the request's events (the final success: `deliver`);
        "" for none, None for the reply a migration would get. Its step has one reply, edited
        as it goes on, as a migration's steps do (bot/step_replies.py)."""
        kind = event.kind
        if kind is EventKind.PROGRESS:
            return ignition_texts.progress(event.text)
        if kind is not EventKind.STATE:
            return ""
        state, requester = event.state, request.requester
        if state == "approved":
            return ignition_texts.approved_reply(
                request.decided_by, event.at or self.ctx.clock(), requester
            )
        if state == "failed":
            return ignition_texts.failed_reply(requester, event.text, request.id)
        if state == "cancelled":
            return ignition_texts.cancelled_reply(requester, request.extra.get("cancelled_by", ""))
        return None  # pending, rejected, expired: as for a migration

    # ---- delivery --------------------------------------------------------------------------

    def deliver(self, request_id: str) -> str | None:
        """Send the made file to the requester by DM, once; the thread reply, or None."""
        ctx = self.ctx
        if not ctx.redis.set(SENT + request_id, "1", nx=True, ex=SENT_TTL):
            return None  # already delivered (or tried): never twice
        request = ctx.store.get(request_id)
        if request is None:
            return None
        data = ir.fetch_file(ctx.redis, request.id)
        ir.forget_file(ctx.redis, request.id)  # whatever happens next, it is not kept
        why = self._why_not(request, data)
        if why is None:
            assert data is not None
            why = self._upload(request, data)
        if why is not None:
            ctx.store.update(request.id, **{"x:" + DELIVERY: why})
            ctx.audit.record(Action.FAILED, "joinops", request, f"Ignition file not sent: {why}")
            return ignition_texts.not_sent_reply(
                request.requester,
                why,
                float(request.extra.get(ir.VALID_UNTIL) or 0),
                request.extra.get(ir.TOKEN_ID, ""),
                request.target,
            )
        ctx.store.update(request.id, **{"x:" + DELIVERY: DELIVERED})
        digest = request.extra.get(ir.SHA256, "")
        ctx.audit.record(
            Action.SUCCEEDED,
            "joinops",
            request,
            f"Ignition file sent to {request.requester} by direct message, sha256 {digest}",
        )
        return ignition_texts.sent_reply(
            request.requester,
            request.decided_by,
            ir.filename(request),
            len(data or b""),
            float(request.extra.get(ir.VALID_UNTIL) or 0),
            digest,
            request.extra.get(ir.TOKEN_ID, ""),
            request.target,
        )

    def _why_not(self, request: Request, data: bytes | None) -> str | None:
        if request.state is not State.SUCCEEDED:
            return ignition_texts.cancelled_late()
        standing = self.ctx.standing(request.requester, again=True)  # as Slack says now
        if standing != "":
            return ignition_texts.requester_not_allowed(standing)
        if data is None:
            return ignition_texts.gone()
        if hashlib.sha256(data).hexdigest() != request.extra.get(ir.SHA256):
            return ignition_texts.changed()
        return None

    def _upload(self, request: Request, data: bytes) -> str | None:
        """Upload into the requester's DM, to be deleted from Slack when its token expires;
        None when done, else why not."""
        client = self.ctx.client
        valid_until = float(request.extra.get(ir.VALID_UNTIL) or 0)
        try:
            opened = client.conversations_open(users=request.requester)
            channel = str(opened["channel"]["id"])
            uploaded = client.files_upload_v2(
                channel=channel,
                file=data,
                filename=ir.filename(request),
                title=ir.filename(request),
                initial_comment=ignition_texts.dm_comment(
                    request.target,
                    str(request.role),
                    request.id,
                    request.decided_by,
                    valid_until,
                    request.extra.get(ir.SHA256, ""),
                ),
            )
        except SLACK_ERRORS as e:
            log.warning("request %s: Ignition file not delivered: %s", request.id, e)
            return ignition_texts.slack_refused(slack_error(e))
        file_id = str((uploaded.get("file") or {}).get("id") or "")
        if file_id:
            self.expiry.remember(request.id, file_id, channel, valid_until)
        else:  # Slack always answers with the file; should it not, the file cannot be deleted
            log.warning("request %s: Slack named no file id: it stays in Slack", request.id)
        return None
