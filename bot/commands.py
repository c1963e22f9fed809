"""`/join`: parse, acknowledge, hand the work on; and the work itself, where it runs.

The dispatcher parses the text (pure, microseconds) and acknowledges with the route's immediate
answer — the ephemeral reply to a typo or to `help`, or "Checking…". A route with work after the
ack is then handed on as a `PostAckJob` (bot/post_ack.py: the text, who, where, the
response_url), and that is all the acking process does for it: under `joinops serve` one Redis
push, the job run by the post-ack process of whichever replica has a thread free
(bot/post_ack_process.py) — the rule checks asked of a worker (`bot.checks`), the request
message posted, the records written, all off the acking interpreter, whose CPU stays with the
next acks. Chosen over handing the work to the workers' checks queue: the work posts to Slack
and answers through the response_url with the bot's clients and texts, which the workers do not
have; and the post-ack process is the bot's own, one per replica, started and stopped with it.
An access check the ack left unsettled (bot/access.py: a user group or a person not in memory
yet) is settled in the acking process after the ack and before the push — a lookup that waits on
Slack, not the CPU, and that fills the memory the next acks decide from. `run_job` is the work's
side: the text parsed again, the route's work run with an `Invocation` answering through the
response_url. A route cannot do work before the ack: the dispatcher hands it on afterwards.

Routes are looked up in order by a predicate on the parsed command. One node with `from SOURCE`
is a migration; one node without it is looked up across the clusters, then is a migration too;
several nodes, or `all from SOURCE`, are one batch (`bot.batch`); `ignition CLUSTER` is an
Ignition request (`bot.ignition`). `arrivals` lists the hosts of the hosts directory
(`joinops.arrivals.listing`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import redis
from slack_bolt.context import BoltContext

from bot import batch_record, grammar, loans, parsed, payloads
from bot.access import PARSED, SETTLE, parse_outcome
from bot.batch import KIND as BATCH
from bot.batch import Batches
from bot.changes import Changes
from bot.context import BotContext
from bot.ignition import Ignitions
from bot.invocation import Invocation, Respond, ack_with, run_logged
from bot.message import RequestMessages
from bot.migration import Migrations
from bot.open_limit import OpenRequestLimit
from bot.post_ack import HandOff, InProcess, PostAckJob, respond_to
from bot.render import report as render_report
from bot.texts import access as access_texts
from bot.texts import answers as answers_texts
from bot.texts import post_ack as post_ack_texts
from bot.texts import usage as usage_texts
from bot.views import arrival as arrival_views
from bot.views import report as report_views
from joinops.arrivals import listing
from joinops.arrivals.store import ArrivalStore
from joinops.errors import ConfigError, UsageError
from joinops.rules import batch as batches
from joinops.rules import locate
from joinops.rules import texts as rule_texts

log = logging.getLogger(__name__)

Work = Callable[[Invocation, Any], object]  # what it returns is not used


@dataclass(frozen=True)
class Route:
    matches: Callable[[parsed.Command], bool]
    ack_text: Callable[[parsed.Command], str | None]  # pure: the immediate ephemeral answer
    work: Work | None = None  # runs after the ack
    opens_request: bool = False  # counts against the person's open requests (bot.open_limit)


def _is(kind: type) -> Callable[[parsed.Command], bool]:
    return lambda command: isinstance(command, kind)


def _one_node(command: parsed.Command) -> bool:
    return (
        isinstance(command, parsed.Migrate)
        and len(command.nodes) == 1
        and command.source is not None
    )


def _one_node_anywhere(command: parsed.Command) -> bool:
    return isinstance(command, parsed.Migrate) and len(command.nodes) == 1


def _several_nodes(command: parsed.Command) -> bool:
    return isinstance(command, parsed.Migrate) and len(command.nodes) > 1


# post-ack work at once: mostly waiting for a worker's check (bot.checks), little CPU of its own
WORK_THREADS = 16


class SlashCommands:
    def __init__(
        self, ctx: BotContext, work_pool: Executor | None = None, hand_off: HandOff | None = None
    ) -> None:
        """`hand_off`: where the work after an ack goes (`PostAckQueue.push`); without it, to
        `work_pool` in this process (a pool of `WORK_THREADS` when not given either)."""
        self.ctx = ctx
        if hand_off is None:
            pool = work_pool or ThreadPoolExecutor(WORK_THREADS, thread_name_prefix="joinops-work")
            hand_off = InProcess(pool, self.run_job).push
        self.hand_off = hand_off
        self.messages = RequestMessages(ctx)
        self.batches = Batches(ctx, self.messages)
        self.ignitions = Ignitions(ctx, self.messages)
        self.migrations = Migrations(ctx, self.messages)
        self.changes = Changes(ctx, self.messages, self.batches)
        self.loans = loans.Loans(ctx, self.messages)
        self.open_limit = OpenRequestLimit(ctx)
        self.routes: list[Route] = [
            Route(_is(parsed.Help), lambda _: usage_texts.help_text()),
            Route(_one_node, self._checking_text, self.migrations.ask, True),
            Route(_one_node_anywhere, self._locating_text, self.locate_and_migrate, True),
            Route(self._too_many_nodes, self._too_many_text),  # refused at once, nothing asked
            Route(_several_nodes, self._checking_many_text, self.migrate_many, True),
            Route(_is(parsed.MigrateAll), self._checking_all_text, self.migrate_all, True),
            Route(_is(parsed.Ignition), self._checking_cluster_text, self.ignition, True),
            Route(_is(parsed.Clusters), lambda _: answers_texts.surveying(), self.clusters),
            Route(_is(parsed.Status), lambda _: None, self.status),
            Route(_is(parsed.List), lambda _: None, self.list_active),
            Route(_is(parsed.Loans), lambda _: None, self.list_loans),
            Route(_is(parsed.Arrivals), lambda _: None, self.list_arrivals),
            Route(_is(parsed.Cancel), lambda _: None, self.changes.cancel),
            Route(_is(parsed.Retry), lambda _: None, self.changes.retry),
        ]

    # ---- the listener ----------------------------------------------------------------------

    def on_command(
        self,
        ack: Callable[..., None],
        command: dict[str, Any],
        respond: Respond,
        context: BoltContext,
    ) -> None:
        typed = context.get(PARSED)  # the access middleware's parse (bot/access.py)
        if typed is None:
            typed = parse_outcome(payloads.command_text(command), self.ctx.clusters.names_to_parse)
        if isinstance(typed, grammar.GrammarError):
            ack_with(ack, typed.reply)
            return
        problem = loans.loan_problem(typed, self.ctx.settings.policy)
        if problem is not None:
            ack_with(ack, problem)
            return
        route = next((r for r in self.routes if r.matches(typed)), None)
        if route is None:
            ack_with(ack, usage_texts.help_text())
            return
        conversation = payloads.private_conversation(command)
        if route.opens_request and conversation:
            ack_with(ack, answers_texts.not_in_a_conversation(conversation))
            return  # a request is posted where it is typed: approvers would never see it here
        ack_with(ack, route.ack_text(typed))
        if route.work is not None:
            job = PostAckJob(
                text=str(command.get("text") or ""),
                user=str(command["user_id"]),
                channel=str(command["channel_id"]),
                response_url=str(command.get("response_url") or ""),
            )
            self._hand_on(job, respond, context.get(SETTLE))

    def _hand_on(
        self, job: PostAckJob, respond: Respond, settle: Callable[[], str | None] | None
    ) -> None:
        """After the ack: the access check settled if it was left so, then the job handed on."""

        def store_lost(e: redis.RedisError) -> None:  # an outage, not a bug: said as such
            log.warning("/join: the state store stopped answering: %s", e)
            Invocation(job.user, job.channel, respond).tell(access_texts.store_lost_midway())

        try:
            refusal = settle() if settle is not None else None
        except redis.RedisError as e:
            store_lost(e)
            return
        if refusal is not None:
            Invocation(job.user, job.channel, respond).tell(refusal)
            return
        self.hand_off(job, store_lost)  # told, not raised, when the job could not be queued

    # ---- the work after the ack (the post-ack process, or this one) ---------------------------

    def run_job(self, job: PostAckJob) -> None:
        """The work of a command acknowledged already, answered through its response_url."""
        inv = Invocation(job.user, job.channel, respond_to(job.response_url))
        try:
            typed = grammar.parse(job.text, self.ctx.clusters.names_to_parse)
        except grammar.GrammarError:  # parsed at the ack: only a cluster gone since
            typed = None
        route = next((r for r in self.routes if typed is not None and r.matches(typed)), None)
        if route is None or route.work is None:
            log.warning("/join: the work of a command no longer parses the same; not run")
            inv.tell(answers_texts.internal_error())
            return
        work = self._within_limit(route.work) if route.opens_request else route.work
        run_logged(work, inv, typed)

    def interrupted(self, job: PostAckJob) -> None:
        """A job whose replica stopped in the middle of it: not run again (it may have posted
        already), the person told."""
        Invocation(job.user, job.channel, respond_to(job.response_url)).tell(
            post_ack_texts.interrupted(job.text)
        )

    def _within_limit(self, work: Work) -> Work:
        """`work` run in one of the person's open-request slots, or refused when none is free."""

        def limited(inv: Invocation, command: Any) -> None:
            with self.open_limit.slot(inv.user) as refusal:
                if refusal is not None:
                    inv.tell(refusal)
                    return
                work(inv, command)

        return limited

    @staticmethod
    def _checking_text(command: parsed.Command) -> str:
        assert isinstance(command, parsed.Migrate) and command.source is not None
        return answers_texts.checking(command.nodes[0], command.source, command.target)

    @staticmethod
    def _locating_text(command: parsed.Command) -> str:
        assert isinstance(command, parsed.Migrate)
        return answers_texts.locating(command.nodes[0])

    def _too_many_nodes(self, command: parsed.Command) -> bool:
        limit = self.ctx.settings.max_batch_nodes
        return isinstance(command, parsed.Migrate) and len(command.nodes) > limit

    def _too_many_text(self, command: parsed.Command) -> str:
        assert isinstance(command, parsed.Migrate)
        return rule_texts.batch_too_large(len(command.nodes), self.ctx.settings.max_batch_nodes)

    @staticmethod
    def _checking_many_text(command: parsed.Command) -> str:
        assert isinstance(command, parsed.Migrate)
        return answers_texts.checking_nodes(len(command.nodes), command.target)

    @staticmethod
    def _checking_all_text(command: parsed.Command) -> str:
        assert isinstance(command, parsed.MigrateAll)
        return answers_texts.checking_all(command.source, command.target)

    @staticmethod
    def _checking_cluster_text(command: parsed.Command) -> str:
        assert isinstance(command, parsed.Ignition)
        return answers_texts.checking_cluster(command.cluster)

    # ---- several nodes, whole clusters, Ignition files --------------------------------------

    def locate_and_migrate(self, inv: Invocation, command: parsed.Migrate) -> None:
        """One node without `from`: found in exactly one cluster, it is an ordinary migration;
        found in none, a mistyped name, answered to the person alone (with the names close to
        it); in two, or in the target only, the refusal lists where."""
        node = command.nodes[0]
        try:
            sources, findings, _ = self.ctx.checks.locate([node], command.target)
        except ConfigError as e:
            inv.tell(answers_texts.configuration_problem(str(e)))
            return
        if node in sources:
            self.migrations.ask(inv, replace(command, source=sources[node]))
            return
        typo = next((f for f in findings if f.code == locate.NODE_MISSING), None)
        if typo is not None:
            inv.tell(typo.text)
            return
        self.migrate_many(inv, command)

    def migrate_many(self, inv: Invocation, command: parsed.Migrate) -> None:
        nodes = list(command.nodes)
        self._batch(
            inv,
            lambda: self.ctx.checks.plan_nodes(
                nodes,
                command.source,
                command.target,
                command.role,
                command.force,
                self.ctx.settings.max_batch_nodes,
            ),
            nodes,
            command,
        )

    def migrate_all(self, inv: Invocation, command: parsed.MigrateAll) -> None:
        self._batch(
            inv,
            lambda: self.ctx.checks.plan_all(
                command.source,
                command.target,
                command.force,
                self.ctx.settings.max_batch_nodes,
            ),
            [],
            command,
        )

    def _batch(
        self,
        inv: Invocation,
        plan: Callable[[], batches.BatchPlan],
        asked: list[str],
        command: parsed.Command,
    ) -> None:
        try:
            made = plan()
        except UsageError as e:
            inv.tell(str(e))
            return
        except ConfigError as e:
            inv.tell(answers_texts.configuration_problem(str(e)))
            return
        lend_for = loans.loan_length(command, self.ctx.settings.policy)
        answer = self.batches.ask(inv.user, inv.channel, made, asked, lend_for=lend_for)
        if answer:
            inv.tell(answer)

    def ignition(self, inv: Invocation, command: parsed.Ignition) -> None:
        answer = self.ignitions.ask(inv.user, inv.channel, command.cluster, command.role)
        if answer:
            inv.tell(answer)

    # ---- questions -------------------------------------------------------------------------

    def clusters(self, inv: Invocation, command: parsed.Clusters) -> None:
        rows = self.ctx.checks.survey()
        _tell_report(inv, report_views.clusters_view(rows))

    def status(self, inv: Invocation, command: parsed.Status) -> None:
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
        if request.kind == BATCH:
            kids = batch_record.children(store, request)
            _tell_report(inv, report_views.batch_status_view(request, kids))
            return
        view = report_views.status_view(request, self.ctx.records.all(request.id))
        _tell_report(inv, self.loans.with_loan(view, request.id))

    def list_active(self, inv: Invocation, command: parsed.List) -> None:
        active = [r for r in self.ctx.store.active() if not r.parent]
        _tell_report(inv, report_views.active_view(active))

    def list_loans(self, inv: Invocation, command: parsed.Loans) -> None:
        _tell_report(inv, self.loans.listed())

    def list_arrivals(self, inv: Invocation, command: parsed.Arrivals) -> None:
        config, directory = self.ctx.settings.arrivals, self.ctx.clusters.hosts
        if config is None or directory is None:
            _tell_report(inv, arrival_views.not_configured_view())
            return
        rows = listing.rows(ArrivalStore(self.ctx.redis, self.ctx.clock), directory.scan())
        _tell_report(inv, arrival_views.list_view(rows, str(config.directory), config.channel))


def _tell_report(inv: Invocation, view: report_views.ReportView) -> None:
    inv.tell(view.text, render_report.report(view))
