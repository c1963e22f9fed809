"""The relay: the engine's events become thread replies and the root message's status line.

It reads the global event stream (`joinops:events`) as a member of a Redis consumer group, in
order, and never talks to Slack itself: each entry becomes work on its channel's lane
(bot/lanes.py: one ordered queue and thread per channel, so replies land in order and a channel
waiting for its posting budget holds up no other), and root messages are re-rendered by the
refresher (bot/refresher.py: coalesced per message, paced, never out of order).

Delivery is at-least-once with idempotence (bot/relay_ledger.py): an entry is recorded as
claimed before anything is posted, as posted once Slack accepted its reply, and acknowledged
in the group when all is done. A restarted relay (the same consumer name: the host's) first
takes its own unacknowledged entries again, and entries a dead consumer left are taken after
`STALE_MS`; the record says what is left to do, so a crash between the claim and the post
re-posts exactly the missing reply, and nothing is posted twice. A reply Slack refused or
failed to answer (posts are not retried when they might have been posted: bot/slack_retry.py)
is logged: the migration never waits for Slack. A redelivered step event edits the reply its
first delivery posted. The root's update is at-least-once: an entry is acknowledged once its
update is kept as wanted in Redis (bot/refresher.py), which tries a failed update again until
Slack shows it, and hands what a stop left to the next relay's start.

Replies: one per step, edited in place as the step goes on (bot/step_replies.py: edits notify
nobody); none for an approval (the root names the approver); one for a rejection, a retry
(mentioning the approvers) and the outcome (mentioning the requester). A post left unanswered
is looked for before the thread gets another (bot/post_once.py). A step's start and progress
change the root's status line at most once every `progress_every` s; a change of state at once.

An Ignition request's success is the moment its file is sent (`bot.ignition`); files whose
token expired are deleted from Slack on their request's lane (`bot.ignition_expiry`). A batch's
nodes post nothing: their events change their STATUS cell in the batch's table, re-rendered at
most every `batch_every` s (its changes of state at once); the batch's thread gets a line per
node outcome and the summary. Every `ADOPT_EVERY` s the refresher takes on root updates a
click's own update handed over (bot/refresher.py).
"""

from __future__ import annotations

import functools
import logging
import socket
import threading
import time

import redis

from bot import batch_record
from bot.batch import KIND as BATCH
from bot.batch import Batches
from bot.context import BotContext
from bot.ignition import Ignitions
from bot.lanes import Lanes
from bot.loans import Loans
from bot.message import SLACK_ERRORS, RequestMessages
from bot.pacing import PacedWebClient
from bot.refresher import ADOPT_EVERY, Refresher
from bot.relay_ledger import DONE, POSTED, Ledger
from bot.replies import STEP_EVENTS, reply_for, running_line, step_place
from bot.step_replies import StepReplies
from bot.texts import batch as batch_texts
from joinops.ignition import request as ir
from joinops.logs import request_context
from joinops.requests.events import GLOBAL_STREAM, Event, EventKind
from joinops.requests.store import Request

log = logging.getLogger(__name__)

GROUP = "joinops-bot"
BACKLOG = 1000  # entries handed to the lanes and not yet done, before reading more waits
IN_STEP = (EventKind.STEP_STARTED, EventKind.STEP_RETRYING, EventKind.PROGRESS)
CHANGES_STATUS = frozenset({*IN_STEP, EventKind.STATE})
STALE_MS = 60_000  # an entry another consumer got but did not acknowledge in this long is taken
FILES_EVERY = 1.0  # seconds between two looks for Ignition files due for deletion
TOKEN_PROBE_EVERY = 10.0  # seconds between auth.test calls while Slack refuses the token


class Relay:
    def __init__(
        self,
        ctx: BotContext,
        *,
        consumer: str | None = None,
        group: str = GROUP,
        block_ms: int = 1000,
        progress_every: float = 2.0,
        batch_every: float = 5.0,
        token_probe_every: float = TOKEN_PROBE_EVERY,
    ) -> None:
        self.ctx = ctx
        self.messages = RequestMessages(ctx)
        self.ignitions = Ignitions(ctx, self.messages)
        self.batches = Batches(ctx, self.messages)
        self.loans = Loans(ctx, self.messages)
        self.ledger = Ledger(ctx.redis)
        self.steps = StepReplies(ctx.redis, ctx.records, self.messages)
        self.lanes = Lanes()
        pacing = ctx.client.pacing if isinstance(ctx.client, PacedWebClient) else None
        self.refresher = Refresher(self.messages, pacing, ctx.redis)  # wishes kept in Redis
        self.batch_every = batch_every
        self.consumer = consumer or socket.gethostname()  # a restart resumes its own entries
        self.group = group
        self.block_ms = block_ms
        self.progress_every = progress_every
        self.token_probe_every = token_probe_every
        self._kept = threading.Event()  # entries left pending while Slack refused the token
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._taken: set[str] = set()  # entries on a lane, not yet done
        self._deleting: set[str] = set()  # requests whose file's deletion is on a lane

    # ---- running ---------------------------------------------------------------------------

    def start(self) -> Relay:
        self.ensure_group()
        self._thread = threading.Thread(target=self._loop, name="joinops-relay", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop reading; finish what the lanes hold (for up to `timeout` s each stage)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self.messages.replies.stop()  # a lost post looked for: posted again at once
        self.lanes.stop(timeout)
        self.refresher.stop(timeout)

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def ensure_group(self) -> None:
        """Create the consumer group at the stream's end, once; later starts resume from it."""
        try:
            self.ctx.redis.xgroup_create(GLOBAL_STREAM, self.group, id="$", mkstream=True)
        except redis.ResponseError as e:
            if "BUSYGROUP" not in str(e):
                raise

    def _loop(self) -> None:
        last_claim = last_files = last_adopt = 0.0
        store_down = False
        resumed = False
        while not self._stop.is_set():
            try:
                if not resumed:
                    self.refresher.resume()  # roots a stopped relay left wanted
                    self._resume()
                    resumed = True
                if time.monotonic() - last_adopt > ADOPT_EVERY:
                    last_adopt = time.monotonic()
                    self.refresher.adopt()  # root updates a click's failure handed over
                if time.monotonic() - last_claim > STALE_MS / 1000:
                    last_claim = time.monotonic()
                    self._take_stale()
                if self.ctx.token.problem() is not None:
                    self._wait_for_the_token()
                    continue
                if self._kept.is_set():  # accepted again (by any call): what waited goes first
                    self._kept.clear()
                    self._resume()
                if time.monotonic() - last_files > FILES_EVERY:
                    last_files = time.monotonic()
                    self._expired_files()
                self.poll()
                if store_down:
                    store_down = False
                    log.info("relay: the state store answers again; relaying")
            except (redis.ConnectionError, redis.TimeoutError) as e:
                if not store_down:  # an outage, not a bug: said once, without a traceback
                    store_down = True
                    log.warning("relay: the state store is unreachable (%s); waiting for it", e)
                self._stop.wait(1.0)
            except redis.ResponseError as e:
                if "NOGROUP" in str(e):  # the stream or group was deleted under us
                    self._recover_group()
                else:
                    log.exception("relay: Redis refused a command")
                    self._stop.wait(1.0)
            except Exception:  # a Redis or Slack hiccup must not end the relay
                log.exception("relay: pass failed")
                self._stop.wait(1.0)

    def _wait_for_the_token(self) -> None:
        """Read nothing new while Slack refuses the token; ask it again now and then (an
        accepted call clears the token's state)."""
        self._stop.wait(self.token_probe_every)
        if self._stop.is_set():
            return
        try:
            self.ctx.client.auth_test()
        except SLACK_ERRORS:
            pass

    def _recover_group(self) -> None:
        try:
            self.ensure_group()
        except redis.RedisError:
            self._stop.wait(1.0)

    def poll(self) -> int:
        """Read the next entries and hand them to the lanes; returns how many were read."""
        while self.lanes.queued > BACKLOG and not self._stop.is_set():
            self._stop.wait(0.1)  # the lanes are far behind (Slack's budget): read no further
        return self._read(">")

    def _resume(self) -> None:
        """Entries this consumer was given before a restart and never acknowledged, again."""
        after = "0"
        while not self._stop.is_set():
            batch = self.ctx.redis.xreadgroup(
                self.group, self.consumer, {GLOBAL_STREAM: after}, count=100
            )
            entries = [e for _, found in batch or [] for e in found]
            if not entries:
                return
            for entry_id, fields in entries:
                after = _s(entry_id)
                if fields:
                    self._handle(after, fields)

    def _read(self, after: str) -> int:
        batch = self.ctx.redis.xreadgroup(
            self.group, self.consumer, {GLOBAL_STREAM: after}, count=50, block=self.block_ms
        )
        handled = 0
        for _, entries in batch or []:
            for entry_id, fields in entries:
                if self._stop.is_set():
                    return handled  # left pending: the next relay takes it
                self._handle(_s(entry_id), fields)
                handled += 1
        return handled

    def _take_stale(self) -> None:
        """Entries a dead consumer was given but never acknowledged become ours."""
        _, entries, *_ = self.ctx.redis.xautoclaim(
            GLOBAL_STREAM, self.group, self.consumer, min_idle_time=STALE_MS, count=100
        )
        for entry_id, fields in entries or []:
            if fields:
                self._handle(_s(entry_id), fields)

    def _expired_files(self) -> None:
        """Ignition files whose token expired: deleted from Slack on their request's lane."""
        expiry = self.ignitions.expiry
        for request_id in expiry.due():
            if request_id in self._deleting:
                continue  # still on its lane (Slack is slow): the lease brings it back later
            self._deleting.add(request_id)
            request = self.ctx.store.get(request_id)
            lane = request.channel if request is not None and request.channel else "-"
            self.lanes.submit(lane, functools.partial(self._delete_file, request_id))

    def _delete_file(self, request_id: str) -> None:
        try:
            with request_context(request_id):
                self.ignitions.expiry.delete(request_id)
        except Exception:
            log.exception("relay: the Ignition file of %s was not deleted", request_id)
        finally:
            self._deleting.discard(request_id)

    def _handle(self, entry_id: str, fields: dict[bytes, bytes]) -> None:
        """Claim the entry and put it on its channel's lane (in the relay's thread: no Slack)."""
        if entry_id in self._taken:
            return  # on a lane already (a long wait for Slack is not a dead consumer)
        try:
            raw = fields.get(b"event") or fields.get("event")  # type: ignore[call-overload]
            event = Event.from_json(_s(raw))
        except (ValueError, TypeError, KeyError):
            log.warning("relay: entry %s is not an event; skipped", entry_id)
            self.ctx.redis.xack(GLOBAL_STREAM, self.group, entry_id)
            return
        before = self.ledger.claim(entry_id)
        if before == DONE:
            self.ctx.redis.xack(GLOBAL_STREAM, self.group, entry_id)
            return
        self._taken.add(entry_id)
        self.lanes.submit(self._lane_of(event), lambda: self._relay(entry_id, event, before))

    def _lane_of(self, event: Event) -> str:
        """The channel the event's words go to: everything said in one channel, in order."""
        if event.kind is EventKind.LOAN:
            loan = self.loans.store.get(event.request_id)
            return loan.channel if loan is not None and loan.channel else "-"
        request = self.ctx.store.get(event.request_id)
        if request is not None and not request.channel and request.parent:
            request = self.ctx.store.get(request.parent)
        return request.channel if request is not None and request.channel else "-"

    def _relay(self, entry_id: str, event: Event, before: str | None) -> None:
        """On the lane: deliver the event, then record it done and acknowledge it — unless
        Slack refuses the token: then it stays pending, and so does every entry after it, to be
        delivered in order once the token works (`_resume`)."""
        if self._kept.is_set():
            self._taken.discard(entry_id)
            return  # an earlier entry waits: this one is not said before it
        try:
            with request_context(event.request_id):
                self.deliver(event, entry_id=entry_id, posted=before == POSTED)
        except redis.RedisError as e:  # its root's update may not be kept: not acknowledged
            log.warning("relay: entry %s waits for the state store: %s", entry_id, e)
            return  # taken again once stale (`_take_stale`)
        except Exception:
            log.exception("relay: entry %s of %s was not relayed", entry_id, event.request_id)
        finally:
            self._taken.discard(entry_id)
        if self.ctx.token.problem() is not None:
            self._kept.set()  # not said in Slack: kept, in order, for when the token works again
            return
        self.ledger.done(entry_id)
        self.ctx.redis.xack(GLOBAL_STREAM, self.group, entry_id)

    def idle(self, timeout: float = 30.0) -> bool:
        """Wait until everything read so far was posted and every root update sent."""
        return self.lanes.idle(timeout) and self.refresher.idle(timeout)

    # ---- one event -------------------------------------------------------------------------

    def deliver(self, event: Event, *, entry_id: str = "", posted: bool = False) -> None:
        """Act on one event. `posted`: its reply was already accepted (a redelivery)."""
        if event.kind is EventKind.LOAN:
            self.loans.deliver(event)  # the loan's thread: bot.loans
            return
        request = self.ctx.store.get(event.request_id)
        if request is None:
            return
        if request.parent:
            self._node_of_batch(request, event)
            return
        if not request.channel or not request.message_ts:
            return  # not a Slack request (the CLI's): nothing to update
        if request.kind == BATCH:
            self._batch(request, event, entry_id, posted)
            return
        if event.kind in IN_STEP:
            self.ctx.store.update(request.id, **{"x:status": running_line(event)})
        if not posted:
            self._say(entry_id, request, event)
        if event.kind not in CHANGES_STATUS:
            return  # a step's outcome is a reply; the status line changes with the next start
        # a change of state at once; a step's start or progress at most every `progress_every`
        within = 0.0 if event.kind is EventKind.STATE else self.progress_every
        self.refresher.want(request.id, within)

    def _say(self, entry_id: str, request: Request, event: Event) -> None:
        """The event in the thread: a step's in its one reply (bot/step_replies.py), a change of
        state as a reply of its own; recorded as posted once Slack accepted it."""
        if event.kind in STEP_EVENTS:
            if self.steps.say(request, event) and entry_id:
                self.ledger.posted(entry_id)
            return
        if event.is_final:
            self.steps.close(request, event)
        self._post(entry_id, request, self._reply(event, request))

    def _post(self, entry_id: str, request: Request, text: str | None) -> None:
        """The event's reply, recorded as posted once Slack accepted it."""
        if text and self.messages.reply(request, text) and entry_id:
            self.ledger.posted(entry_id)

    def _reply(self, event: Event, request: Request) -> str | None:
        if request.kind == ir.KIND:
            if event.is_final and event.state == "succeeded":
                return self.ignitions.deliver(request.id)  # the file goes out, then the reply
            special = self.ignitions.reply_for(event, request)
            if special is not None:
                return special
        return reply_for(event, request, self.ctx)

    # ---- batches ---------------------------------------------------------------------------

    def _node_of_batch(self, child: Request, event: Event) -> None:
        """A batch's node: its STATUS cell changes; the batch's table is re-rendered soon."""
        if event.kind in IN_STEP:
            number, total = step_place(event.step)
            said = event.text if event.kind is not EventKind.STEP_STARTED else ""
            cell = batch_texts.child_step(number, total, event.step, said)
            self.ctx.store.update(child.id, **{"x:" + batch_record.STATUS_CELL: cell})
        elif event.kind is not EventKind.STATE:
            return  # a step's outcome: the next start (or the end) changes the cell
        self.refresher.want(child.parent, self.batch_every)

    def _batch(self, batch: Request, event: Event, entry_id: str, posted: bool) -> None:
        if not posted:
            text = self.batches.reply_for(event, batch)
            self._post(
                entry_id, batch, text if text is not None else reply_for(event, batch, self.ctx)
            )
            if event.kind is EventKind.STATE and event.state in ENDED:
                self.batches.post_final_table(batch)  # when its root only summarises
        within = 0.0 if event.kind is EventKind.STATE else self.batch_every
        self.refresher.want(batch.id, within)


ENDED = frozenset({"succeeded", "failed", "returned", "cancelled", "rejected", "expired"})


def _s(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
