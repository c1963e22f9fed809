"""One node from one cluster to another: `/join NODE from SOURCE to TARGET`.

The rules are checked against both clusters now, by a worker (`bot.checks`); a refusal is
posted (nothing is stored), an allowed move is stored, posted with the buttons and waits for an
approver until it expires.
"""

from __future__ import annotations

from bot import loans, parsed
from bot.availability import posting, record_posted
from bot.context import BotContext
from bot.invocation import Invocation
from bot.message import SLACK_ERRORS, RequestMessages, slack_error
from bot.texts import access as access_texts
from bot.texts import answers as answers_texts
from bot.views.request import findings_json
from joinops.errors import ConfigError, UsageError
from joinops.loans.lend import LOAN_SECONDS
from joinops.loans.texts import spell
from joinops.requests.asks import MigrationAsk, validate_ask
from joinops.requests.audit import Action
from joinops.requests.ids import new_request_id
from joinops.requests.store import Request
from joinops.rules.findings import refusals


class Migrations:
    def __init__(self, ctx: BotContext, msgs: RequestMessages) -> None:
        self.ctx = ctx
        self.messages = msgs

    def ask(self, inv: Invocation, command: parsed.Migrate) -> Request | None:
        """Check the move, then post its refusal, or store it and post it for approval; the
        request stored, or None when there is none."""
        ctx = self.ctx
        assert command.source is not None
        ask = MigrationAsk(
            command.nodes[0], command.source, command.target, command.role, command.force
        )
        try:
            validate_ask(ask, ctx.clusters.names_to_parse)
            verdict = ctx.checks.move(ask)  # on a worker: the bot reads no cluster
        except UsageError as e:
            inv.tell(str(e))
            return None
        except ConfigError as e:
            inv.tell(answers_texts.configuration_problem(str(e)))
            return None
        if not verdict.allowed:
            reasons = " ".join(f.text for f in refusals(verdict.findings))
            ctx.audit.record(
                Action.REFUSED,
                inv.user,
                None,
                reasons,
                node=ask.node,
                source=ask.source,
                target=ask.target,
                role=str(ask.role),
            )
            try:
                self.messages.post_refusal(inv.channel, inv.user, ask, verdict)
            except SLACK_ERRORS as e:
                inv.tell(answers_texts.cannot_post(inv.channel, slack_error(e)))
            return None
        now = ctx.clock()
        request = Request(
            id=new_request_id(),
            node=ask.node,
            source=ask.source,
            target=ask.target,
            role=ask.role,
            requester=inv.user,
            channel=inv.channel,
            created_at=now,
            expires_at=now + ctx.settings.timeouts.approval.total_seconds(),
            destroys_source=verdict.destroys_source,
            from_control_plane=bool(verdict.node and verdict.node.is_control_plane),
            force=ask.force,
            extra={
                "findings": findings_json(verdict),
                "versions": verdict.versions or "",
                "forced_deletions": str(verdict.forced_deletions),
            },
        )
        # Redis answered a moment ago (the worker's verdict came through it); if it is lost
        # before the record is written, record_posted withdraws the message
        lend_for = loans.loan_length(command, ctx.settings.policy)
        if lend_for is not None:
            request.extra[LOAN_SECONDS] = str(lend_for.total_seconds())
        if not posting(ctx, request):  # a click quicker than the record waits for it
            inv.tell(access_texts.store_unreachable())
            return None
        try:
            request.message_ts = self.messages.post_request(request)
        except SLACK_ERRORS as e:
            inv.tell(answers_texts.cannot_post(inv.channel, slack_error(e)))
            return None
        if not record_posted(ctx, request):
            inv.tell(access_texts.store_unreachable())
            return None
        if lend_for is not None:
            loans.lend(ctx, request, lend_for)
        detail = f"a loan of {spell(lend_for)}" if lend_for is not None else ""
        ctx.audit.record(Action.REQUESTED, inv.user, request, detail)
        return request
