"""Authorisation: a filter in front of every command and click, driven by the configuration.

- `/join help` (or a bare `/join`): anyone, anywhere.
- Any other `/join`: a requester — in `requesters.users`, or a member of one of
  `requesters.groups`; anyone when both lists are empty — or an approver; and only in one of
  `requesters.channels` when that list is not empty (approvers included).
- **Approve** and **Reject**: an approver (`approvers`: user IDs and user groups). Whether this
  approver may approve *this* request (their own) is a rule about the request: bot/approval.py.
- Any other button of ours: as `/join`, wherever the button is.

Cancel and retry (the requester, or an approver), typed or clicked (the Cancel button), depend
on the request: bot/changes.py.

Nothing before the ack waits on the network: the middleware decides from memory — the
configuration and the user groups' members already listed (bot/authz.py). When a decision needs
a group that is not in memory, the request goes on with the check *unsettled* (`SETTLE` in bolt's
context): the command or click is acknowledged, then the lookup is made and a refusal answered
through `respond` before any work (`settled_first` for clicks, `bot.commands` for commands).

A refusal says what is missing and whom to ask, only the refused person sees it, and it goes
into the audit trail as `denied` (written after the ack). A command's refusal is its ack when
memory could decide it; a click's goes through the click's response_url right after the ack. A
user group whose members Slack cannot list grants nothing, and the refusal says so.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from slack_bolt.context import BoltContext
from slack_bolt.response import BoltResponse

from bot import grammar, parsed, payloads
from bot.context import BotContext
from bot.middleware import ephemeral_ack, tell
from bot.render.blocks import APPROVE_ACTION, REJECT_ACTION
from bot.texts import access as access_texts
from joinops.requests.audit import Action
from joinops.requests.ids import is_request_id

log = logging.getLogger(__name__)

DECISIONS = {APPROVE_ACTION: "approve", REJECT_ACTION: "reject"}


SETTLE = "joinops_settle_access"  # bolt context: the check to finish after the ack
# bolt context: the command's text as parsed here (a Command, or the GrammarError), so that the
# listener does not parse it again: the ack's CPU is the next acks' (issue #34)
PARSED = "joinops_parsed_command"
ClickListener = Callable[[Callable[..., None], dict[str, Any], Any], None]


class Unsettled(enum.Enum):
    """The decision needs a user group's members that are not in memory."""

    UNSETTLED = "unsettled"


UNSETTLED = Unsettled.UNSETTLED


@dataclass(frozen=True)
class Refusal:
    answer: str  # what the refused person reads
    reason: str  # what the audit trail and the log say


class Access:
    def __init__(self, ctx: BotContext, answers: Executor) -> None:
        self.ctx = ctx
        self.answers = answers  # where refusals are recorded and answered from, after the ack

    # ---- the middleware (bolt injects the arguments by name) --------------------------------

    def check(
        self,
        body: dict[str, Any],
        respond: Any,
        context: BoltContext,
        next: Callable[[], BoltResponse],
    ) -> BoltResponse | None:
        if payloads.is_slash_command(body):
            return self._command(body, context, next)
        if payloads.is_block_actions(body):
            return self._click(body, respond, context, next)
        return next()

    def _command(
        self, body: dict[str, Any], context: BoltContext, next: Callable[[], BoltResponse]
    ) -> BoltResponse:
        outcome = parse_outcome(payloads.command_text(body), self.ctx.clusters.names_to_parse)
        context[PARSED] = outcome
        command = None if isinstance(outcome, grammar.GrammarError) else outcome
        if isinstance(command, parsed.Help):
            return next()
        user, channel = str(body["user_id"]), str(body["channel_id"])
        refusal = self.may_ask_known(user, channel)
        if refusal is None:
            return next()
        if refusal is UNSETTLED:
            context[SETTLE] = lambda: self._settle_command(user, channel, command)
            return next()
        self.answers.submit(self._deny_command, user, refusal, command)
        return ephemeral_ack(refusal.answer)

    def _click(
        self,
        body: dict[str, Any],
        respond: Any,
        context: BoltContext,
        next: Callable[[], BoltResponse],
    ) -> BoltResponse:
        user = str(body["user"]["id"])
        action = payloads.first_action(body)
        verb = DECISIONS.get(str(action.get("action_id")))
        channel = payloads.click_channel(body)
        refusal = self.may_decide_known(user) if verb else self.may_ask_known(user, channel)
        if refusal is None:
            return next()
        if refusal is UNSETTLED:
            context[SETTLE] = lambda: self._settle_click(user, verb, action, channel)
            return next()
        self.answers.submit(self._deny_click_and_say, user, verb, action, refusal, respond)
        return BoltResponse(status=200, body="")

    # ---- after the ack: decisions that needed a lookup, and the refusals' audit --------------

    def _settle_command(
        self, user: str, channel: str, command: parsed.Command | None
    ) -> str | None:
        refusal = self.may_ask(user, channel)
        if refusal is not None:
            self._deny_command(user, refusal, command)
            return refusal.answer
        return None

    def _settle_click(
        self, user: str, verb: str | None, action: dict[str, Any], channel: str | None
    ) -> str | None:
        refusal = self.may_decide(user) if verb else self.may_ask(user, channel)
        if refusal is not None:
            self._deny_click(user, verb, action, refusal)
            return refusal.answer
        return None

    def _deny_command(self, user: str, refusal: Refusal, command: parsed.Command | None) -> None:
        self.ctx.audit.record(
            Action.DENIED, user, None, f"/join: {refusal.reason}", **_about(command)
        )
        log.info("refused /join from %s: %s", user, refusal.reason)

    def _deny_click(
        self, user: str, verb: str | None, action: dict[str, Any], refusal: Refusal
    ) -> None:
        value = str(action.get("value") or "").partition(":")[0]  # a loan's: `req-…:generation`
        request_id = value if is_request_id(value) else ""
        request = self.ctx.store.get(request_id) if request_id else None
        reason = f"{verb or 'click'}: {refusal.reason}"
        self.ctx.audit.record(Action.DENIED, user, request, reason, request_id=request_id)
        log.info("refused a click from %s: %s", user, reason)

    def _deny_click_and_say(
        self, user: str, verb: str | None, action: dict[str, Any], refusal: Refusal, respond: Any
    ) -> None:
        try:
            self._deny_click(user, verb, action, refusal)
        finally:
            tell(respond, refusal.answer)

    # ---- the rules -------------------------------------------------------------------------

    def may_ask_known(self, user: str, channel: str | None) -> Refusal | Unsettled | None:
        """`may_ask` from memory only (what an ack may use); UNSETTLED when it needs a lookup."""
        by_config = self._asker_known(user, channel)
        return by_config if by_config is not None else self._standing_known(user)

    def may_ask(self, user: str, channel: str | None) -> Refusal | None:
        """May `user` use `/join` (beyond help) in `channel` (None: wherever)? Then: are they
        a full member of this workspace (or allowed as a guest or an outsider)?"""
        return self._asker(user, channel) or self._standing(user)

    def may_decide_known(self, user: str) -> Refusal | Unsettled | None:
        """`may_decide` from memory only; UNSETTLED when it needs a lookup."""
        by_config = self._decider_known(user)
        return by_config if by_config is not None else self._standing_known(user)

    def may_decide(self, user: str) -> Refusal | None:
        """May `user` approve or reject requests at all?"""
        return self._decider(user) or self._standing(user)

    def _standing_known(self, user: str) -> Refusal | Unsettled | None:
        why = self.ctx.known_standing(user)
        return UNSETTLED if why is None else _standing_refusal(why)

    def _standing(self, user: str) -> Refusal | None:
        why = self.ctx.standing(user)
        if why is None:
            return Refusal(access_texts.standing_unknown(), "users.info did not answer")
        return _standing_refusal(why)

    def _asker_known(self, user: str, channel: str | None) -> Refusal | Unsettled | None:
        decided, refusal = self._ask_without_groups(user, channel)
        if decided:
            return refusal
        member = self.ctx.members.known_member_of(user, self.ctx.settings.requesters.groups)
        approver = self.ctx.approvers.known(user)
        if member or approver:
            return None
        if member is None or approver is None:
            return UNSETTLED
        return Refusal(
            access_texts.not_a_requester(self.ctx.approvers.configured), "not a requester"
        )

    def _asker(self, user: str, channel: str | None) -> Refusal | None:
        decided, refusal = self._ask_without_groups(user, channel)
        if decided:
            return refusal
        approvers = self.ctx.approvers
        member, unknown = self.ctx.members.member_of(user, self.ctx.settings.requesters.groups)
        if member:
            return None
        approver, unknown_approvers = approvers.check(user)
        if approver:
            return None
        unknown += unknown_approvers
        if unknown:
            return Refusal(access_texts.membership_unknown(unknown), f"groups {unknown} not listed")
        return Refusal(access_texts.not_a_requester(approvers.configured), "not a requester")

    def _ask_without_groups(self, user: str, channel: str | None) -> tuple[bool, Refusal | None]:
        """(decided, refusal): what the channel and the user lists decide; not decided when the
        user groups must."""
        allowed = self.ctx.settings.requesters
        arrivals = self.ctx.settings.arrivals
        here = [*allowed.channels, *([arrivals.channel] if arrivals and arrivals.channel else [])]
        if channel is not None and allowed.channels and channel not in here:
            return True, Refusal(
                access_texts.wrong_channel(allowed.channels), f"channel {channel} not allowed"
            )
        if allowed.anyone or user in allowed.users or user in self.ctx.approvers.users:
            return True, None
        return False, None

    def _decider_known(self, user: str) -> Refusal | Unsettled | None:
        approver = self.ctx.approvers.known(user)
        if approver is None:
            return UNSETTLED
        if approver:
            return None
        return Refusal(
            access_texts.not_an_approver_ask(self.ctx.approvers.configured), "not an approver"
        )

    def _decider(self, user: str) -> Refusal | None:
        approver, unknown = self.ctx.approvers.check(user)
        if approver:
            return None
        if unknown:
            return Refusal(access_texts.membership_unknown(unknown), f"groups {unknown} not listed")
        return Refusal(
            access_texts.not_an_approver_ask(self.ctx.approvers.configured), "not an approver"
        )


def _standing_refusal(why: str) -> Refusal | None:
    """Guests, other organisations' members and deactivated users, unless allowed."""
    if not why:
        return None
    return Refusal(access_texts.standing_refused(why), f"a {why} user")


def settled_first(listener: ClickListener) -> Callable[..., None]:
    """A click listener that first finishes an access check the middleware left unsettled: the
    click is acknowledged, the lookup made, and a refusal answered through `respond`."""

    def guarded(
        ack: Callable[..., None], body: dict[str, Any], respond: Any, context: BoltContext
    ) -> None:
        settle = context.get(SETTLE)
        if settle is None:
            listener(ack, body, respond)
            return
        ack()
        refusal = settle()
        if refusal is not None:
            tell(respond, refusal)
            return
        listener(_already_acked, body, respond)

    return guarded


def _already_acked(*args: Any, **kwargs: Any) -> None:
    """The ack a listener calls when `settled_first` acknowledged its click already."""


def parse_outcome(text: str, known: list[str]) -> parsed.Command | grammar.GrammarError:
    """`text` parsed, or why it does not parse (kept in bolt's context under `PARSED`)."""
    try:
        return grammar.parse(text, known)
    except grammar.GrammarError as e:
        return e.with_traceback(None)  # kept for the request's life: no frames held


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
