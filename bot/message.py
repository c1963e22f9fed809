"""The request message in the channel: posted once, then updated in place, and its thread.

What the message shows is derived from the request record (the source of truth) each time it is
rendered, under a short per-request Redis lock: whoever updates last shows the latest state, so
an approval click and the relay racing each other cannot leave a stale status behind.

Stored with the request (`extra`): `findings` (JSON), `versions`, and `status`, the running
line the relay keeps current; `cancelled_by`, `retried_by` say who did that. The message's shape
depends on the request's kind: a migration, an Ignition file (`delivery` says whether the file
reached the requester), or a batch (`bot.batch_view`).
"""

from __future__ import annotations

import json
import logging
from datetime import timedelta

from slack_sdk.errors import SlackApiError, SlackRequestError
from slack_sdk.models.blocks import Block

from bot import batch_view, blocks
from bot.context import BotContext
from bot.texts import batch as batch_texts
from bot.texts import ignition as ignition_texts
from bot.texts import request as request_texts
from joinops.ignition import request as ir
from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from joinops.requests.plan import plan_steps
from joinops.requests.store import Request
from joinops.rules.asks import MigrationAsk
from joinops.rules.check import Verdict

log = logging.getLogger(__name__)

LOCK_SECONDS = 30  # the longest one render-and-update may hold the message
BATCH = "batch"  # the kind of a request for several nodes (joinops.rules.batch)
DELIVERY = "delivery"  # an Ignition request's delivery: DELIVERED or why not
DELIVERED = "sent"
SLACK_ERRORS = (SlackApiError, SlackRequestError, OSError)


def slack_error(error: Exception) -> str:
    """Slack's error code (`not_in_channel`), or the kind of failure when there is none."""
    if isinstance(error, SlackApiError):
        return str(error.response.get("error") or "error")
    return type(error).__name__


def findings_json(verdict: Verdict) -> str:
    return json.dumps([[f.severity.name, f.text] for f in verdict.findings])


def _findings(request: Request) -> tuple[tuple[str, str], ...]:
    try:
        raw = json.loads(request.extra.get("findings") or "[]")
    except ValueError:
        return ()
    return tuple((str(sev), str(text)) for sev, text in raw)


def _plan(node: str, source: str, target: str, role: Role) -> tuple[str, ...]:
    ask = MigrationAsk(node, source, target, role)
    return tuple(step.title for step in plan_steps(ask))


def refusal_view(requester: str, ask: MigrationAsk, verdict: Verdict) -> blocks.RequestView:
    return blocks.RequestView(
        requester=requester,
        node=ask.node,
        source=ask.source,
        target=ask.target,
        role=str(ask.role),
        request_id="",
        findings=tuple((f.severity.name, f.text) for f in verdict.findings),
        versions=verdict.versions,
        plan=_plan(ask.node, ask.source, ask.target, ask.role),
        status=request_texts.refused_status(),
        refused=True,
        force=ask.force,
    )


def request_view(request: Request) -> blocks.RequestView:
    return blocks.RequestView(
        requester=request.requester,
        node=request.node,
        source=request.source,
        target=request.target,
        role=str(request.role),
        request_id=request.id,
        findings=_findings(request),
        versions=request.extra.get("versions") or None,
        plan=_plan(request.node, request.source, request.target, request.role),
        status=status_line(request),
        buttons=request.state is State.PENDING,
        decision=decision_line(request),
        destroys_source=request.destroys_source,
        force=request.force,
        forced_deletions=_int(request.extra.get("forced_deletions")),
    )


def _int(text: str | None) -> int:
    try:
        return int(text or 0)
    except ValueError:
        return 0


def decision_line(request: Request) -> str:
    """What stands where the buttons were."""
    state = request.state
    if state is State.PENDING:
        return ""
    if state is State.REJECTED:
        return request_texts.rejected_by(request.decided_by, request.decided_at)
    if state is State.EXPIRED:
        return request_texts.not_approved_in_time()
    if request.decided_by:
        return request_texts.approved_by(request.decided_by, request.decided_at)
    if state is State.CANCELLED:
        return request_texts.cancelled_by(request.extra.get("cancelled_by", ""))
    return ""


def ignition_view(request: Request) -> blocks.IgnitionView:
    return blocks.IgnitionView(
        requester=request.requester,
        cluster=request.target,
        role=str(request.role),
        request_id=request.id,
        ttl=ignition_ttl(request),
        status=status_line(request),
        buttons=request.state is State.PENDING,
        decision=decision_line(request),
    )


def ignition_refusal_view(
    requester: str, cluster: str, role: Role, reasons: list[str]
) -> blocks.IgnitionView:
    return blocks.IgnitionView(
        requester=requester,
        cluster=cluster,
        role=str(role),
        request_id="",
        ttl=ir.DEFAULT_TTL,
        status=ignition_texts.refused_status(),
        reasons=tuple(reasons),
        refused=True,
    )


def ignition_ttl(request: Request) -> timedelta:
    try:
        return timedelta(seconds=int(request.extra.get(ir.EXTRA_TTL) or 0)) or ir.DEFAULT_TTL
    except ValueError:
        return ir.DEFAULT_TTL


def _ignition_status(request: Request) -> str:
    state = request.state
    if state is State.SUCCEEDED:
        delivery = request.extra.get(DELIVERY, "")
        if delivery == DELIVERED:
            valid = float(request.extra.get(ir.VALID_UNTIL) or 0)
            return ignition_texts.sent_status(request.requester, valid)
        return ignition_texts.not_sent_status() if delivery else ignition_texts.made_status()
    if state is State.FAILED:
        return ignition_texts.failed_status()
    return ignition_texts.cancelled_status()


def status_line(request: Request) -> str:
    state = request.state
    if request.kind == ir.KIND and state in (State.SUCCEEDED, State.FAILED, State.CANCELLED):
        return _ignition_status(request)
    if state is State.PENDING:
        return request_texts.waiting_status(
            request.expires_at, retry=bool(request.extra.get("retried_by"))
        )
    if state is State.APPROVED:
        return request_texts.queued_status()
    if state is State.RUNNING:
        return request.extra.get("status") or request_texts.queued_status()
    if state is State.SUCCEEDED:
        return request_texts.succeeded_status(request.outcome)
    if state is State.FAILED:
        return request_texts.failed_status(request.failed_step)
    if state is State.CANCELLED:
        return (
            request_texts.cancelled_status()
            if request.outcome
            else request_texts.cancelling_status()
        )
    if state is State.REJECTED:
        return request_texts.rejected_status()
    return request_texts.expired_status()


class RequestMessages:
    """Posts request messages and thread replies; keeps the root message current."""

    def __init__(self, ctx: BotContext) -> None:
        self.ctx = ctx

    def post_refusal(
        self, channel: str, requester: str, ask: MigrationAsk, verdict: Verdict
    ) -> str:
        answer = self.ctx.client.chat_postMessage(
            channel=channel,
            text=request_texts.refused_fallback(requester, ask.node, ask.source, ask.target),
            blocks=blocks.request_message(refusal_view(requester, ask, verdict)),
            unfurl_links=False,
        )
        return str(answer["ts"])

    def post_request(self, request: Request) -> str:
        """Post the message with the buttons; returns its ts. Raises the SDK's errors."""
        text, block_list = self.rendered(request)
        return self.post(request.channel, text, block_list)

    def post(self, channel: str, text: str, block_list: list[Block]) -> str:
        """Post a top-level message; returns its ts. Raises the SDK's errors."""
        answer = self.ctx.client.chat_postMessage(
            channel=channel, text=text, blocks=block_list, unfurl_links=False
        )
        return str(answer["ts"])

    def rendered(self, request: Request) -> tuple[str, list[Block]]:
        """The notification text and the blocks of a request's message, by its kind."""
        if request.kind == ir.KIND:
            text = ignition_texts.fallback(request.requester, request.target, str(request.role))
            return text, blocks.ignition_message(ignition_view(request))
        if request.kind == BATCH:
            kids = batch_view.children(self.ctx.store, request)
            rows = batch_view.load_rows(request)
            view = batch_view.view(
                requester=request.requester,
                target=request.target,
                rows=rows,
                findings=batch_view.load_findings(request),
                max_parallel=self.ctx.settings.max_parallel,
                status=batch_view.status_line(request, kids),
                batch=request,
                kids={c.node: c for c in kids},
                decision=decision_line(request),
            )
            sources = sorted({r.source for r in rows})
            return batch_texts.fallback(
                request.requester, len(rows), sources, request.target
            ), blocks.batch_message(view)
        return _fallback(request), blocks.request_message(request_view(request))

    def refresh(self, request_id: str) -> bool:
        """Render the root message from the record and update it in place. Never raises."""
        try:
            with self.ctx.redis.lock(
                f"joinops:bot:message-lock:{request_id}",
                timeout=LOCK_SECONDS,
                blocking_timeout=LOCK_SECONDS,
            ):
                request = self.ctx.store.get(request_id)
                if request is None or not request.channel or not request.message_ts:
                    return False
                text, block_list = self.rendered(request)
                self.ctx.client.chat_update(
                    channel=request.channel, ts=request.message_ts, text=text, blocks=block_list
                )
                return True
        except SLACK_ERRORS as e:
            log.warning("request %s: could not update its message: %s", request_id, e)
        except Exception:
            log.exception("request %s: could not update its message", request_id)
        return False

    def reply(self, request: Request, text: str) -> bool:
        """A reply in the request's thread. A failure is logged, never raised."""
        try:
            self.ctx.client.chat_postMessage(
                channel=request.channel,
                thread_ts=request.message_ts,
                text=text,
                blocks=blocks.reply(text),
                unfurl_links=False,
            )
            return True
        except SLACK_ERRORS as e:
            log.warning("request %s: could not post in its thread: %s", request.id, e)
            return False


def _fallback(request: Request) -> str:
    return request_texts.request_fallback(
        request.requester, request.node, request.source, request.target
    )
