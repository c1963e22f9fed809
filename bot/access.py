"""Authorisation: a filter in front of every command and click, driven by the configuration.

- `/join help` (or a bare `/join`): anyone, anywhere.
- Any other `/join`: a requester — in `requesters.users`, or a member of one of
  `requesters.groups`; anyone when both lists are empty — or an approver; and only in one of
  `requesters.channels` when that list is not empty (approvers included).
- **Approve** and **Reject**: an approver (`approvers`: user IDs and user groups). Whether this
  approver may approve *this* request (their own) is a rule about the request: bot/approval.py.
- Any other button of ours: as `/join`, wherever the button is.

Cancel and retry (the requester, or an approver) depend on the request: bot/commands.py.

A refusal says what is missing and whom to ask, only the refused person sees it, and it goes
into the audit trail as `denied`. A command's refusal is its ack; a click's goes through the
click's response_url right after the ack. A user group whose members Slack cannot list grants
nothing, and the refusal says so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from slack_bolt.response import BoltResponse

from bot import grammar, parsed, payloads
from bot.context import BotContext
from bot.middleware import answer_click_later, ephemeral_ack
from bot.render.blocks import APPROVE_ACTION, REJECT_ACTION
from bot.texts import access as access_texts
from joinops.requests.audit import Action
from joinops.requests.ids import is_request_id

log = logging.getLogger(__name__)

DECISIONS = {APPROVE_ACTION: "approve", REJECT_ACTION: "reject"}


@dataclass(frozen=True)
class Refusal:
    answer: str  # what the refused person reads
    reason: str  # what the audit trail and the log say


class Access:
    def __init__(self, ctx: BotContext, answers: Executor) -> None:
        self.ctx = ctx
        self.answers = answers  # where a click's refusal is sent from, after the ack

    # ---- the middleware (bolt injects the arguments by name) --------------------------------

    def check(
        self, body: dict[str, Any], respond: Any, next: Callable[[], BoltResponse]
    ) -> BoltResponse | None:
        if payloads.is_slash_command(body):
            return self._command(body, next)
        if payloads.is_block_actions(body):
            return self._click(body, respond, next)
        return next()

    def _command(self, body: dict[str, Any], next: Callable[[], BoltResponse]) -> BoltResponse:
        command = _parse(payloads.command_text(body), self.ctx.clusters.names_to_parse)
        if isinstance(command, parsed.Help):
            return next()
        user, channel = str(body["user_id"]), str(body["channel_id"])
        refusal = self.may_ask(user, channel)
        if refusal is None:
            return next()
        self.ctx.audit.record(
            Action.DENIED, user, None, f"/join: {refusal.reason}", **_about(command)
        )
        log.info("refused /join from %s: %s", user, refusal.reason)
        return ephemeral_ack(refusal.answer)

    def _click(
        self, body: dict[str, Any], respond: Any, next: Callable[[], BoltResponse]
    ) -> BoltResponse:
        user = str(body["user"]["id"])
        action = payloads.first_action(body)
        verb = DECISIONS.get(str(action.get("action_id")))
        refusal = self.may_decide(user) if verb else self.may_ask(user, channel=None)
        if refusal is None:
            return next()
        value = str(action.get("value") or "").partition(":")[0]  # a loan's: `req-…:generation`
        request_id = value if is_request_id(value) else ""
        request = self.ctx.store.get(request_id) if request_id else None
        reason = f"{verb or 'click'}: {refusal.reason}"
        self.ctx.audit.record(Action.DENIED, user, request, reason, request_id=request_id)
        log.info("refused a click from %s: %s", user, reason)
        return answer_click_later(self.answers, respond, refusal.answer)

    # ---- the rules -------------------------------------------------------------------------

    def may_ask(self, user: str, channel: str | None) -> Refusal | None:
        """May `user` use `/join` (beyond help) in `channel` (None: wherever)?"""
        allowed = self.ctx.settings.requesters
        if channel is not None and allowed.channels and channel not in allowed.channels:
            return Refusal(
                access_texts.wrong_channel(allowed.channels), f"channel {channel} not allowed"
            )
        approvers = self.ctx.approvers
        if allowed.anyone or user in allowed.users or user in approvers.users:
            return None
        member, unknown = self.ctx.members.member_of(user, allowed.groups)
        if member:
            return None
        approver, unknown_approvers = approvers.check(user)
        if approver:
            return None
        unknown += unknown_approvers
        if unknown:
            return Refusal(access_texts.membership_unknown(unknown), f"groups {unknown} not listed")
        return Refusal(access_texts.not_a_requester(approvers.configured), "not a requester")

    def may_decide(self, user: str) -> Refusal | None:
        """May `user` approve or reject requests at all?"""
        approver, unknown = self.ctx.approvers.check(user)
        if approver:
            return None
        if unknown:
            return Refusal(access_texts.membership_unknown(unknown), f"groups {unknown} not listed")
        return Refusal(
            access_texts.not_an_approver_ask(self.ctx.approvers.configured), "not an approver"
        )


def _parse(text: str, known: list[str]) -> parsed.Command | None:
    try:
        return grammar.parse(text, known)
    except grammar.GrammarError:
        return None


def _about(command: parsed.Command | None) -> dict[str, str]:
    """What a refused command asked for, for the audit trail."""
    about = {}
    nodes = getattr(command, "nodes", None)
    if nodes:
        about["node"] = " ".join(nodes)
    for key in ("source", "target"):
        value = getattr(command, key, None)
        if value:
            about[key] = str(value)
    role = getattr(command, "role", None)
    if role is not None:
        about["role"] = str(role)
    return about
