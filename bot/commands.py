"""`/join`: parse, acknowledge, then do the work.

The dispatcher parses the text (pure, microseconds), acknowledges with the route's immediate
answer — the ephemeral reply to a typo or to `help`, or "Checking…" — and only then runs the
route's work, which may read clusters, Redis and Slack and answers through `respond`. A route
cannot do work before the ack: the dispatcher calls it afterwards.

Routes are looked up in order by a predicate on the parsed command. One node with `from SOURCE`
is a migration; one node without it is looked up across the clusters, then is a migration too;
several nodes, or `all from SOURCE`, are one batch (`bot.batch`); `ignition CLUSTER` is an
Ignition request (`bot.ignition`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import redis

from bot import blocks, grammar
from bot.availability import record_posted, store_answers
from bot.batch import KIND as BATCH
from bot.batch import Batches
from bot.context import BotContext
from bot.ignition import Ignitions
from bot.message import SLACK_ERRORS, RequestMessages, findings_json, slack_error
from bot.texts import access as access_texts
from bot.texts import answers as answers_texts
from bot.texts import batch as batch_texts
from bot.texts import ignition as ignition_texts
from bot.texts import status as status_texts
from bot.texts import usage as usage_texts
from joinops.clusters.survey import survey
from joinops.errors import ConfigError, UsageError
from joinops.ignition import request as ir
from joinops.messages import cancelled as cancelled_outcome
from joinops.queue import enqueue_batch_advance, schedule_expiry
from joinops.requests.audit import Action
from joinops.requests.events import Event, EventKind
from joinops.requests.ids import new_request_id
from joinops.requests.lifecycle import State
from joinops.requests.store import Request
from joinops.rules import batch as batches
from joinops.rules.asks import MigrationAsk, validate_ask
from joinops.rules.check import check
from joinops.rules.findings import refusals

log = logging.getLogger(__name__)

Respond = Callable[..., Any]


@dataclass(frozen=True)
class Invocation:
    """Who typed the command, where, and how to answer them."""

    user: str
    channel: str
    respond: Respond

    def tell(self, text: str, block_list: list[Any] | None = None) -> None:
        """An ephemeral answer to the user who typed the command."""
        try:
            self.respond(
                text=text, blocks=block_list or blocks.reply(text), response_type="ephemeral"
            )
        except Exception as e:  # the answer is a courtesy; what was done stands
            log.warning("could not answer %s: %s", self.user, e)


Work = Callable[[Invocation, Any], None]


@dataclass(frozen=True)
class Route:
    matches: Callable[[grammar.Command], bool]
    ack_text: Callable[[grammar.Command], str | None]  # pure: the immediate ephemeral answer
    work: Work | None = None  # runs after the ack


def _is(kind: type) -> Callable[[grammar.Command], bool]:
    return lambda command: isinstance(command, kind)


def _one_node(command: grammar.Command) -> bool:
    return (
        isinstance(command, grammar.Migrate)
        and len(command.nodes) == 1
        and command.source is not None
    )


def _one_node_anywhere(command: grammar.Command) -> bool:
    return isinstance(command, grammar.Migrate) and len(command.nodes) == 1


def _several_nodes(command: grammar.Command) -> bool:
    return isinstance(command, grammar.Migrate) and len(command.nodes) > 1


WORK_THREADS = 2  # post-ack work (rule checks through the Kubernetes client) at once


class SlashCommands:
    def __init__(self, ctx: BotContext, work_pool: Executor | None = None) -> None:
        self.ctx = ctx
        # The work after an ack runs here, not on bolt's listener threads: under a burst, CPU-heavy
        # checks on every listener thread would make the next commands' acks wait their turn.
        self.work_pool = work_pool or ThreadPoolExecutor(
            WORK_THREADS, thread_name_prefix="joinops-work"
        )
        self.messages = RequestMessages(ctx)
        self.batches = Batches(ctx, self.messages)
        self.ignitions = Ignitions(ctx, self.messages)
        self.routes: list[Route] = [
            Route(_is(grammar.Help), lambda _: usage_texts.help_text()),
            Route(_one_node, self._checking_text, self.migrate),
            Route(_one_node_anywhere, self._locating_text, self.locate_and_migrate),
            Route(_several_nodes, self._checking_many_text, self.migrate_many),
            Route(_is(grammar.MigrateAll), self._checking_all_text, self.migrate_all),
            Route(_is(grammar.Ignition), self._checking_cluster_text, self.ignition),
            Route(_is(grammar.Clusters), lambda _: answers_texts.surveying(), self.clusters),
            Route(_is(grammar.Status), lambda _: None, self.status),
            Route(_is(grammar.List), lambda _: None, self.list_active),
            Route(_is(grammar.Cancel), lambda _: None, self.cancel),
            Route(_is(grammar.Retry), lambda _: None, self.retry),
        ]

    # ---- the listener ----------------------------------------------------------------------

    def on_command(
        self, ack: Callable[..., None], command: dict[str, Any], respond: Respond
    ) -> None:
        try:
            parsed = grammar.parse(str(command.get("text") or ""), self.ctx.settings.cluster_names)
        except grammar.GrammarError as e:
            _ack(ack, e.reply)
            return
        route = next((r for r in self.routes if r.matches(parsed)), None)
        if route is None:
            _ack(ack, usage_texts.help_text())
            return
        _ack(ack, route.ack_text(parsed))
        if route.work is not None:
            invocation = Invocation(str(command["user_id"]), str(command["channel_id"]), respond)
            self.work_pool.submit(_logged, route.work, invocation, parsed)

    @staticmethod
    def _checking_text(command: grammar.Command) -> str:
        assert isinstance(command, grammar.Migrate) and command.source is not None
        return answers_texts.checking(command.nodes[0], command.source, command.target)

    @staticmethod
    def _locating_text(command: grammar.Command) -> str:
        assert isinstance(command, grammar.Migrate)
        return answers_texts.locating(command.nodes[0])

    @staticmethod
    def _checking_many_text(command: grammar.Command) -> str:
        assert isinstance(command, grammar.Migrate)
        return answers_texts.checking_nodes(len(command.nodes), command.target)

    @staticmethod
    def _checking_all_text(command: grammar.Command) -> str:
        assert isinstance(command, grammar.MigrateAll)
        return answers_texts.checking_all(command.source, command.target)

    @staticmethod
    def _checking_cluster_text(command: grammar.Command) -> str:
        assert isinstance(command, grammar.Ignition)
        return answers_texts.checking_cluster(command.cluster)

    # ---- several nodes, whole clusters, Ignition files --------------------------------------

    def locate_and_migrate(self, inv: Invocation, command: grammar.Migrate) -> None:
        """One node without `from`: found in exactly one cluster, it is an ordinary migration;
        found in none or in two, the refusal says where it looked or lists both."""
        node = command.nodes[0]
        try:
            sources, _ = batches.locate([node], command.target, self.ctx.clusters)
        except ConfigError as e:
            inv.tell(answers_texts.configuration_problem(str(e)))
            return
        if node in sources:
            self.migrate(inv, replace(command, source=sources[node]))
            return
        self.migrate_many(inv, command)

    def migrate_many(self, inv: Invocation, command: grammar.Migrate) -> None:
        nodes = list(command.nodes)
        self._batch(
            inv,
            lambda: batches.plan_nodes(
                nodes,
                command.source,
                command.target,
                command.role,
                self.ctx.clusters,
                force=command.force,
            ),
            nodes,
        )

    def migrate_all(self, inv: Invocation, command: grammar.MigrateAll) -> None:
        self._batch(
            inv,
            lambda: batches.plan_all(
                command.source, command.target, self.ctx.clusters, force=command.force
            ),
            [],
        )

    def _batch(
        self, inv: Invocation, plan: Callable[[], batches.BatchPlan], asked: list[str]
    ) -> None:
        try:
            made = plan()
        except UsageError as e:
            inv.tell(str(e))
            return
        except ConfigError as e:
            inv.tell(answers_texts.configuration_problem(str(e)))
            return
        answer = self.batches.ask(inv.user, inv.channel, made, asked)
        if answer:
            inv.tell(answer)

    def ignition(self, inv: Invocation, command: grammar.Ignition) -> None:
        answer = self.ignitions.ask(inv.user, inv.channel, command.cluster, command.role)
        if answer:
            inv.tell(answer)

    # ---- a migration request ---------------------------------------------------------------

    def migrate(self, inv: Invocation, command: grammar.Migrate) -> None:
        ctx = self.ctx
        assert command.source is not None
        ask = MigrationAsk(
            command.nodes[0], command.source, command.target, command.role, command.force
        )
        try:
            validate_ask(ask, ctx.clusters.names)
            source, target = ctx.clusters.get(ask.source), ctx.clusters.get(ask.target)
        except UsageError as e:
            inv.tell(str(e))
            return
        except ConfigError as e:
            inv.tell(answers_texts.configuration_problem(str(e)))
            return
        verdict = check(ask, source, target)
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
            return
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
        if not store_answers(ctx):  # nothing is posted that could not be recorded
            inv.tell(access_texts.store_unreachable())
            return
        try:
            request.message_ts = self.messages.post_request(request)
        except SLACK_ERRORS as e:
            inv.tell(answers_texts.cannot_post(inv.channel, slack_error(e)))
            return
        if not record_posted(ctx, request):
            inv.tell(access_texts.store_unreachable())
            return
        ctx.audit.record(Action.REQUESTED, inv.user, request)
        schedule_expiry(ctx.redis, request.id, request.expires_at)

    # ---- questions -------------------------------------------------------------------------

    def clusters(self, inv: Invocation, command: grammar.Clusters) -> None:
        rows = survey(self.ctx.clusters)
        inv.tell(status_texts.clusters_title(), blocks.clusters_table(rows))

    def status(self, inv: Invocation, command: grammar.Status) -> None:
        store = self.ctx.store
        if command.request_id:
            request = store.get(command.request_id)
            if request is None:
                inv.tell(answers_texts.unknown_request(command.request_id))
                return
        else:
            request = next((r for r in store.recent(200) if r.requester == inv.user), None)
            if request is None:
                inv.tell(answers_texts.no_requests_of(inv.user))
                return
        title = status_texts.status_title(request.id, str(request.state))
        if request.kind == BATCH:
            inv.tell(title, blocks.batch_status_report(request, self.batches.status_lines(request)))
            return
        inv.tell(title, blocks.status_report(request, self.ctx.records.all(request.id)))

    def list_active(self, inv: Invocation, command: grammar.List) -> None:
        active = [r for r in self.ctx.store.active() if not r.parent]
        inv.tell(status_texts.list_title(len(active)), blocks.active_list(active))

    # ---- changing a request ----------------------------------------------------------------

    def _request_for(self, inv: Invocation, request_id: str, action: str) -> Request | None:
        """The request `inv.user` may `action`, or None once they were told why not."""
        request = self.ctx.store.get(request_id)
        if request is None:
            inv.tell(answers_texts.unknown_request(request_id))
            return None
        if not self.ctx.may_act_on(inv.user, request.requester):
            self.ctx.audit.record(Action.DENIED, inv.user, request, f"{action}: not the requester")
            inv.tell(answers_texts.not_allowed_to(action, request.id))
            return None
        return request

    def cancel(self, inv: Invocation, command: grammar.Cancel) -> None:
        ctx = self.ctx
        request = self._request_for(inv, command.request_id, "cancel")
        if request is None:
            return
        if request.kind == BATCH:
            inv.tell(self.batches.cancel(inv.user, request))
            return
        if request.kind == ir.KIND and request.state is State.RUNNING:
            inv.tell(ignition_texts.cannot_cancel(request.id))
            return
        moved, before = ctx.store.transition(
            request.id, State.CANCELLED, unless_flag="agent_started", **{"x:cancelled_by": inv.user}
        )
        if not moved:
            current = ctx.store.get(request.id) or request
            if current.state.is_active and current.agent_started:
                inv.tell(
                    answers_texts.cannot_cancel_agent(
                        request.id, request.node, request.source, request.target
                    )
                )
            else:
                inv.tell(answers_texts.cannot_cancel_finished(request.id, str(current.state)))
            return
        ctx.audit.record(Action.CANCELLED, inv.user, request, f"was {before}")
        if request.parent:  # a batch's node: the batch goes on without it
            enqueue_batch_advance(ctx.redis, request.parent)
        if before in (State.PENDING, State.APPROVED):
            # No worker runs it (a queued job finds it cancelled and stops): say so ourselves.
            outcome = (
                ignition_texts.cancelled_outcome()
                if request.kind == ir.KIND
                else cancelled_outcome(request)
            )
            ctx.store.update(request.id, outcome=outcome)
            ctx.events.emit(
                Event(request.id, EventKind.STATE, outcome, state="cancelled", at=ctx.clock())
            )
            inv.tell(answers_texts.cancelled_now(request.id))
        else:
            inv.tell(
                answers_texts.cancelling(request.id, request.node)
            )  # the worker rolls back, reports
        self.messages.refresh(request.id)

    def retry(self, inv: Invocation, command: grammar.Retry) -> None:
        ctx = self.ctx
        request = self._request_for(inv, command.request_id, "retry")
        if request is None:
            return
        if request.kind == BATCH:
            inv.tell(self.batches.retry_answer(request))
            return
        if request.parent:
            inv.tell(batch_texts.member_not_retried(request.id, request.parent))
            return
        if not request.message_ts:
            inv.tell(answers_texts.retry_without_message(request.id))
            return
        now = ctx.clock()
        expires_at = now + ctx.settings.timeouts.approval.total_seconds()
        moved, before = ctx.store.transition(
            request.id,
            State.PENDING,
            expires_at=expires_at,
            decided_by="",
            decided_at=0,
            outcome="",
            **{"x:retried_by": inv.user},
        )
        if not moved:
            inv.tell(answers_texts.retry_only_failed(request.id, str(before or request.state)))
            return
        ctx.audit.record(Action.RETRIED, inv.user, request)
        text = f"retry asked by {inv.user}"
        ctx.events.emit(Event(request.id, EventKind.STATE, text, state="pending", at=now))
        schedule_expiry(ctx.redis, request.id, expires_at)
        self.messages.refresh(request.id)
        inv.tell(answers_texts.retry_asked(request.id))


def _logged(work: Callable[..., None], inv: Invocation, command: grammar.Command) -> None:
    """Run a route's work; a bug goes to the log with its traceback, a plain line to the user."""
    try:
        work(inv, command)
    except redis.RedisError as e:  # an outage, not a bug: no traceback, and said as such
        log.warning("/join: the state store stopped answering: %s", e)
        inv.tell(access_texts.store_lost_midway())
    except Exception:
        log.exception("/join: the work after the ack failed")
        inv.tell(answers_texts.internal_error())


def _ack(ack: Callable[..., None], text: str | None) -> None:
    """Acknowledge, with an immediate answer only the user sees when there is one."""
    if text:
        ack(text=text, blocks=blocks.reply(text), response_type="ephemeral")
    else:
        ack()
