"""Several nodes in one request: `/join n1 n2 n3 to DST [from SRC] [as ROLE]`, `/join all from
SRC to DST`.

The plan (`joinops.rules.batch`) is judged as a whole and posted as one request message with a table
(`bot.views.batch`); refusals about the batch come first, and the buttons only appear when the
whole plan is allowed. One approval approves every node (`approve_children`) and asks a worker
to start what may start (`enqueue_batch_advance`); the workers then run each node as an ordinary
migration, in the order the plan demands.

While it runs, the relay routes each node's events to the batch's root message (its STATUS
cell, updated in place, at most once a second) instead of the thread; the thread gets one line
per node outcome and the summary, which the batch's own stream carries.

Cancel: before approval, the batch and every node are cancelled. After it, every node that has
not started its node agent is cancelled (a running one rolls back, as a single migration does);
the others finish, and the batch ends with its summary. Retry: a batch is not retried as a whole
— the answer is the exact `/join` for the nodes it did not move, which plans them again against
the clusters as they are now.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import timedelta

from bot import batch_record, loans
from bot.availability import store_answers
from bot.context import BotContext
from bot.message import SLACK_ERRORS, RequestMessages, slack_error
from bot.render import batch as render_batch
from bot.texts import access as access_texts
from bot.texts import answers as answers_texts
from bot.texts import batch as batch_texts
from bot.views import batch as batch_views
from joinops import parallelism
from joinops.loans.lend import LOAN_SECONDS
from joinops.queue import enqueue_batch_advance
from joinops.requests import cancel_texts, outcome_texts
from joinops.requests.audit import Action
from joinops.requests.events import Event, EventKind
from joinops.requests.expiries import schedule_expiry
from joinops.requests.lifecycle import State
from joinops.requests.store import Request
from joinops.requests.surface import Surface
from joinops.rules.batch import BatchPlan, approve_children, create_batch

log = logging.getLogger(__name__)

KIND = "batch"


def with_placeholders(rows: list[batch_record.Row], asked: Sequence[str]) -> list[batch_record.Row]:
    """A refused plan lists every node asked for, also those it could not place."""
    placed = {r.node for r in rows}
    return rows + [
        batch_record.Row(node, "?", "-", "", "", (), ()) for node in asked if node not in placed
    ]


class Batches:
    def __init__(self, ctx: BotContext, msgs: RequestMessages) -> None:
        self.ctx = ctx
        self.messages = msgs

    # ---- asking ----------------------------------------------------------------------------

    def ask(
        self,
        user: str,
        channel: str,
        plan: BatchPlan,
        asked: Sequence[str] = (),
        lend_for: timedelta | None = None,
    ) -> str | None:
        """Post the batch's request message (or its refusal); what to tell `user`, if anything."""
        ctx = self.ctx
        rows = batch_record.rows_of(plan)
        findings = batch_record.plan_findings(plan)
        if not plan.allowed:
            return self._refuse(user, channel, plan, with_placeholders(rows, asked), findings)
        if not store_answers(ctx):  # nothing is posted that could not be recorded
            return access_texts.store_unreachable()
        now = ctx.clock()
        expires_at = now + ctx.settings.timeouts.approval.total_seconds()
        batch = create_batch(ctx.store, plan, requester=user, state=State.PENDING, channel=channel)
        ctx.store.update(
            batch.id,
            expires_at=expires_at,
            **{
                "x:" + batch_record.ROWS: batch_record.dump_rows(rows),
                "x:" + batch_record.FINDINGS: batch_record.dump_findings(findings),
                # what its message says and its workers keep to (joinops/parallelism.py)
                "x:" + parallelism.STORED: parallelism.for_new_batch(ctx.settings, ctx.redis),
            },
        )
        kids = batch_record.child_ids(batch)
        if lend_for is not None:
            ctx.store.update(batch.id, **{"x:" + LOAN_SECONDS: lend_for.total_seconds()})
        for child_id in kids:  # a node nobody approved expires with its batch
            ctx.store.update(child_id, expires_at=expires_at)
            child = ctx.store.get(child_id)
            if lend_for is not None and child is not None:
                loans.lend(ctx, child, lend_for)  # each node is lent, and returned, on its own
        batch = ctx.store.get(batch.id) or batch
        try:
            ts = self.messages.post_request(batch)
        except SLACK_ERRORS as e:
            self._cancel_pending(batch, "request message not posted")
            return answers_texts.cannot_post(channel, slack_error(e))
        ctx.store.update(batch.id, message_ts=ts)
        self.messages.post_pages(channel, ts, self.messages.batch_pages(batch))  # when too large
        ctx.audit.record(Action.REQUESTED, user, batch, f"{len(rows)} nodes")
        for request_id in (batch.id, *kids):
            schedule_expiry(ctx.redis, request_id, expires_at)
        return None

    def _refuse(
        self,
        user: str,
        channel: str,
        plan: BatchPlan,
        rows: list[batch_record.Row],
        findings: list[tuple[str, str]],
    ) -> str | None:
        reasons = [t for s, t in findings if s == "REFUSAL"] + [
            f"{r.node}: {t}" for r in rows for s, _, t in r.findings if s == "REFUSAL"
        ]
        self.ctx.audit.record(
            Action.REFUSED,
            user,
            None,
            " ".join(reasons),
            node=", ".join(r.node for r in rows),
            source=",".join(sorted({r.source for r in rows})),
            target=plan.target,
        )
        view = batch_views.view(
            requester=user,
            target=plan.target,
            rows=rows,
            findings=findings,
            max_parallel=None,  # a refusal shows no order
            status=batch_texts.refused_status(),
            force=plan.force,
        )
        try:
            ts = self.messages.post(channel, view.fallback, render_batch.batch_message(view))
        except SLACK_ERRORS as e:
            return answers_texts.cannot_post(channel, slack_error(e))
        self.messages.post_pages(channel, ts, render_batch.thread_pages(view))  # when too large
        return None

    # ---- deciding --------------------------------------------------------------------------

    def start(self, batch: Request) -> None:
        """Approved: every node is approved, and a worker starts what may start now."""
        current = self.ctx.store.get(batch.id) or batch
        approve_children(self.ctx.store, current, current.decided_by)
        enqueue_batch_advance(self.ctx.redis, batch.id)

    def close_children(self, batch: Request, state: State, outcome: str) -> None:
        """The batch was rejected (or cancelled) before approval: so is each of its nodes."""
        for child_id in batch_record.child_ids(batch):
            self.ctx.store.transition(child_id, state, outcome=outcome)

    def _cancel_pending(self, batch: Request, outcome: str) -> bool:
        moved, _ = self.ctx.store.transition(batch.id, State.CANCELLED, outcome=outcome)
        if moved:
            self.close_children(batch, State.CANCELLED, outcome)
        return moved

    def cancel(self, user: str, batch: Request) -> str:
        """`/join cancel` of a batch; the answer for `user`."""
        ctx = self.ctx
        if batch.state is State.PENDING:
            ctx.store.update(batch.id, **{"x:" + batch_record.CANCELLED_BY: user})
            if self._cancel_pending(batch, batch_texts.cancelled_outcome()):
                ctx.audit.record(Action.CANCELLED, user, batch, "before approval")
                ctx.events.emit(
                    Event(
                        batch.id,
                        EventKind.STATE,
                        batch_texts.cancelled_outcome(),
                        state="cancelled",
                        at=ctx.clock(),
                    )
                )
                self.messages.refresh(batch.id)
                return batch_texts.cancelled_now(batch.id)
            batch = ctx.store.get(batch.id) or batch
        if batch.state not in (State.APPROVED, State.RUNNING):
            return cancel_texts.cannot_cancel_finished(batch.id, str(batch.state))
        ctx.store.update(batch.id, **{"x:" + batch_record.CANCELLED_BY: user})
        stopped, going_on = 0, []
        for child in batch_record.children(ctx.store, batch):
            if child.state.is_terminal:
                continue
            moved, before = ctx.store.transition(
                child.id,
                State.CANCELLED,
                unless_flag="agent_started",
                **{"x:cancelled_by": user},
            )
            if not moved:
                going_on.append(child.node)
                continue
            stopped += 1
            if before in (State.PENDING, State.APPROVED):  # no worker runs it: say so here
                outcome = outcome_texts.cancelled(child)
                ctx.store.update(child.id, outcome=outcome)
                ctx.events.emit(
                    Event(child.id, EventKind.STATE, outcome, state="cancelled", at=ctx.clock())
                )
        ctx.audit.record(Action.CANCELLED, user, batch, f"{stopped} nodes stopped")
        enqueue_batch_advance(ctx.redis, batch.id)  # it ends once every node has
        self.messages.refresh(batch.id)
        return cancel_texts.batch_cancelling(batch.id, stopped, going_on, Surface.SLACK)

    def retry_answer(self, batch: Request) -> str:
        if batch.state is not State.FAILED:
            return answers_texts.retry_only_failed(batch.id, str(batch.state))
        kids = batch_record.children(self.ctx.store, batch)
        return batch_texts.not_retried(batch.id, batch_record.not_moved(kids), batch.target)

    # ---- the thread ------------------------------------------------------------------------

    def post_final_table(self, batch: Request) -> None:
        """A batch that ended, its root only summarising: where each node ended, in the thread."""
        current = self.ctx.store.get(batch.id) or batch
        if current.state.is_terminal and current.channel and current.message_ts:
            pages = self.messages.batch_pages(current, final=True)
            self.messages.post_pages(current.channel, current.message_ts, pages)

    def reply_for(self, event: Event, batch: Request) -> str | None:
        """The thread reply for an event of the batch's own stream; "" for none, None for the
        reply a migration would get."""
        if event.kind is EventKind.PROGRESS:  # one node ended
            child = next(
                (c for c in batch_record.children(self.ctx.store, batch) if c.node == event.step),
                None,
            )
            return batch_texts.node_reply(str(child.state) if child else "", event.text)
        if event.kind is not EventKind.STATE:
            return ""
        state, requester = event.state, batch.requester
        if state == "approved":
            count = len(batch_record.child_ids(batch))
            at = event.at or self.ctx.clock()
            return batch_texts.approved_reply(batch.decided_by, at, requester, count)
        if state == "succeeded":
            return batch_texts.done_reply(requester, event.text)
        if state == "failed":
            left = batch_record.not_moved(batch_record.children(self.ctx.store, batch))
            by = batch.extra.get(batch_record.CANCELLED_BY, "")
            if by:
                return batch_texts.cancelled_late_reply(
                    requester, by, event.text, left, batch.target
                )
            return batch_texts.failed_reply(requester, event.text, left, batch.target)
        if state == "cancelled":
            return batch_texts.cancelled_reply(
                requester, batch.extra.get(batch_record.CANCELLED_BY, "")
            )
        return None
