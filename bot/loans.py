"""Loans on the Slack side: `for DURATION` checked, the loan's thread, its two buttons, the list.

- `loan_problem`: a `for DURATION` that does not parse, or is outside `policy.min_loan` ..
  `policy.max_loan`, is answered at once (ephemeral) with the allowed range.
- `lend`: a request asked `for DURATION` gets its loan (state `lending`, joinops.loans) before it
  is posted, so its message shows the loan.
- `deliver`: the workers' loan events (joinops.loans, workers.loans) become the thread's lines:
  lent, the reminder with **Extend 4h** and **Return now**, the return request's own message
  (its progress follows it in the same thread, as for any request), overdue, returned.
- The buttons: the requester of the loan or an approver (others get an ephemeral refusal,
  audited as `denied`). Extend moves the return (and the reminder) back by 4 h, within
  `policy.max_loan`; Return now makes it due at once. Both are compare-and-sets on the loan, so
  a double click or two people at once change it once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

from bot import parsed
from bot.context import BotContext
from bot.message import SLACK_ERRORS, RequestMessages
from bot.render import blocks as render_blocks
from bot.render import loans as render_loans
from bot.texts import loans as loan_texts
from bot.texts import usage as usage_texts
from bot.views import loans as loan_views
from bot.views.report import ReportView
from joinops.errors import UsageError
from joinops.loans import texts as shared_texts
from joinops.loans.duration import parse_loan
from joinops.loans.lend import lend as lend_request
from joinops.loans.model import EXTENSION, Loan, LoanState, reminder_lead
from joinops.loans.schedule import return_at_once, schedule, unschedule
from joinops.loans.store import LoanStore
from joinops.requests.audit import Action
from joinops.requests.events import Event
from joinops.requests.ids import is_request_id
from joinops.requests.store import Request
from joinops.settings import Policy

log = logging.getLogger(__name__)
RETURNABLE = (LoanState.ACTIVE, LoanState.OVERDUE)

Respond = Callable[..., Any]


def loan_problem(command: parsed.Command, policy: Policy) -> str | None:
    """The answer to a `for DURATION` that is not allowed, or None."""
    word = getattr(command, "loan", "")
    if not word:
        return None
    try:
        parse_loan(word, policy)
    except UsageError as e:
        return usage_texts.error_reply(str(e), loan_texts.USAGE_LOAN)
    return None


def loan_length(command: parsed.Command, policy: Policy) -> timedelta | None:
    word = getattr(command, "loan", "")
    return parse_loan(word, policy) if word else None


def lend(ctx: BotContext, request: Request, length: timedelta) -> None:
    """Give `request` (stored) its loan."""
    lend_request(LoanStore(ctx.redis, ctx.clock), ctx.store, request, length)


class Loans:
    def __init__(self, ctx: BotContext, msgs: RequestMessages) -> None:
        self.ctx = ctx
        self.messages = msgs
        self.store = LoanStore(ctx.redis, ctx.clock)

    # ---- the thread (the relay calls this for every loan event) ------------------------------

    def deliver(self, event: Event) -> None:
        loan = self.store.get(event.request_id)
        if loan is None or not loan.channel or not loan.thread_ts:
            return  # asked at the terminal: `joinops loans` shows it
        what = event.state
        if what == "lent":
            lead = reminder_lead(timedelta(seconds=loan.due_at - loan.lent_at))
            self._say(loan, loan_texts.lent(loan.node, loan.home, loan.borrower, loan.due_at, lead))
        elif what == "reminder":
            ts = self._post(loan, loan_views.reminder_view(loan))
            if ts:
                self.store.note(loan.id, reminder_ts=ts)
        elif what == "returning":
            self._pressed(loan, loan_views.reminder_view(loan).text, still_lent=False)
            self._post_return(loan)
        elif what == "overdue":
            ts = self._post(loan, loan_views.overdue_view(loan, event.text))
            if ts:
                self.store.note(loan.id, reminder_ts=ts)
        elif what == "closed":
            self._say(loan, loan_texts.closed(event.text))
        elif what == "returned":
            self._say(loan, loan_texts.returned(loan.node, loan.home))

    def _post_return(self, loan: Loan) -> None:
        """The return request's message in the loan's thread; its progress follows it there."""
        request = self.ctx.store.get(loan.return_request)
        if request is None or request.message_ts:
            return
        waits = not request.decided_by
        self._say(loan, loan_texts.returning(loan.node, loan.home, loan.approver, waits))
        text, block_list = self.messages.rendered(request)
        ts = self._chat(loan, text, block_list)
        if ts:
            self.ctx.store.update(request.id, message_ts=ts)

    def _say(self, loan: Loan, text: str) -> str:
        return self._chat(loan, text, render_blocks.reply(text))

    def _post(self, loan: Loan, view: loan_views.LoanMessageView) -> str:
        return self._chat(loan, view.fallback, render_loans.loan_message(view))

    def _chat(self, loan: Loan, text: str, block_list: list[Any]) -> str:
        try:
            answer = self.ctx.client.chat_postMessage(
                channel=loan.channel,
                thread_ts=loan.thread_ts,
                text=text,
                blocks=block_list,
                unfurl_links=False,
            )
            return str(answer["ts"])
        except SLACK_ERRORS as e:
            log.warning("loan %s: could not post in its thread: %s", loan.id, e)
            return ""

    def _pressed(self, loan: Loan, said: str, still_lent: bool) -> None:
        """The reminder (or overdue) message says what was done."""
        if not loan.reminder_ts:
            return
        view = loan_views.pressed_view(loan, said, still_lent)
        try:
            self.ctx.client.chat_update(
                channel=loan.channel,
                ts=loan.reminder_ts,
                text=view.fallback,
                blocks=render_loans.loan_message(view),
            )
        except SLACK_ERRORS as e:
            log.warning("loan %s: could not update its reminder: %s", loan.id, e)

    # ---- the buttons (bolt injects the arguments by name) -----------------------------------

    def on_extend(self, ack: Callable[..., None], body: dict[str, Any], respond: Respond) -> None:
        ack()
        self._click(body, respond, self.extend)

    def on_return(self, ack: Callable[..., None], body: dict[str, Any], respond: Respond) -> None:
        ack()
        self._click(body, respond, self.return_now)

    def _click(
        self,
        body: dict[str, Any],
        respond: Respond,
        act: Callable[[str, Loan, int | None], str | None],
    ) -> None:
        user = str(body["user"]["id"])
        loan_id, generation = _button_value(str(body["actions"][0].get("value") or ""))
        loan = self.store.get(loan_id) if is_request_id(loan_id) else None
        if loan is None:
            answer: str | None = loan_texts.unknown_loan(loan_id)
        elif not self.ctx.may_act_on(user, loan.requester):
            self._audit(
                Action.DENIED, user, loan, "loan button: neither its requester nor an approver"
            )
            answer = loan_texts.not_yours(loan.requester)
        else:
            answer = act(user, loan, generation)
        if answer:
            _tell(respond, answer)

    def extend(self, user: str, loan: Loan, generation: int | None) -> str | None:
        longest = self.ctx.settings.policy.max_loan
        extended, why = self.store.extend(loan.id, EXTENSION, longest, generation)
        if extended is None:
            current = self.store.get(loan.id) or loan
            if why == "too-long":
                return shared_texts.extension_too_long(longest)
            if why == "changed":
                return loan_texts.changed_since(str(current.state), current.due_at)
            return loan_texts.not_extendable(str(current.state))
        unschedule(self.ctx.redis, loan.id, extended.generation - 1)
        schedule(self.ctx.redis, extended)
        self._audit(Action.EXTENDED, user, extended, f"by {shared_texts.spell(EXTENSION)}")
        said = loan_texts.extended(extended.node, EXTENSION, user, extended.due_at)
        self._pressed(extended, said, still_lent=True)
        self._say(extended, said)
        return None

    def return_now(self, user: str, loan: Loan, generation: int | None) -> str | None:
        asked = self.store.ask_return(loan.id, generation)
        if asked is None:
            current = self.store.get(loan.id) or loan
            if current.state in RETURNABLE:
                return loan_texts.changed_since(str(current.state), current.due_at)
            return loan_texts.not_returnable(str(current.state))
        self._audit(Action.RETURN_ASKED, user, asked, "Return now")
        said = loan_texts.return_asked(asked.node, asked.home, user)
        self._pressed(asked, said, still_lent=False)
        self._say(asked, said)
        unschedule(self.ctx.redis, loan.id, asked.generation - 1)
        return_at_once(self.ctx.redis, asked)
        return None

    def _audit(self, action: Action, user: str, loan: Loan, detail: str) -> None:
        self.ctx.audit.record(
            action,
            user,
            None,
            detail,
            request_id=loan.id,
            node=loan.node,
            source=loan.home,
            target=loan.borrower,
        )

    # ---- `/join loans`, `/join status` -------------------------------------------------------

    def with_loan(self, view: ReportView, request_id: str) -> ReportView:
        """A request's status, with its loan's line when it lends (or returns) a node."""
        loan = self.store.get(request_id)
        line = loan_views.status_line(loan) if loan is not None else ""
        return replace(view, lines=(*view.lines, line)) if line else view

    def listed(self) -> ReportView:
        return loan_views.list_view(self.store.listed())


def _button_value(value: str) -> tuple[str, int | None]:
    """`req-…:3` → (the loan, the generation its message showed); a bare id: no generation."""
    loan_id, _, generation = value.partition(":")
    return loan_id, int(generation) if generation.isdigit() else None


def _tell(respond: Respond, text: str) -> None:
    try:
        respond(text=text, response_type="ephemeral", replace_original=False)
    except Exception as e:  # the answer is a courtesy; what was done stands
        log.warning("could not answer a click: %s", e)
