"""A request's steps in its thread: one reply per step, posted when the step starts, then edited
in place as it is retried and as it ends (done, failed).

A new message notifies the thread's followers; an edit does not (Slack shows it as a change to a
message already seen). So the followers hear of each step once, and of the outcome once: a
one-node migration's thread has its eight step replies and the outcome, where a reply for every
start and every end made seventeen.

Each step's reply is kept in Redis (`joinops:bot:step-replies:<request id>`, a hash: step → its
ts, the words it shows, whether it is still open — running —, the run of the step it shows and
the `at` of the last event it shows), for as long as the relay's ledger keeps its entries, so a
restarted relay edits the reply its predecessor posted. An event edits its step's reply when that
reply is open, or shows the same run of the step (a worker resumed it, or the entry came again);
one that would show what the reply shows already sends nothing. Otherwise it posts a new reply:
a step's first start, a step run again after it failed (`/join retry`), and an outcome whose
start was never posted (its post failed) or whose edit failed — never lost.

A step already done when its start is relayed (the lane was behind: 25 migrations in one
channel) is posted as done, from the step's record (`joinops.requests.steprecords`), and its
own "done" then finds nothing to change: under load a step costs one post, not a post and an
edit. A reply is rendered only once the channel's posting budget lets it go (bot/pacing.py), and
the steps after it that ended in the meantime go in the same reply, a line each: when the engine
is ahead of Slack's one post a second per channel, a thread gets fewer, longer replies instead of
falling further behind, and each of those steps' own events finds itself shown.

When the request ends, a reply still open (a cancel stops a step without its outcome) is
edited to say the step stopped.
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, replace

from redis import Redis

from bot.message import RequestMessages
from bot.pacing import PacedWebClient
from bot.relay_ledger import TTL
from bot.replies import done_reply, step_reply, stopped_reply
from joinops.requests.events import Event, EventKind
from joinops.requests.plan import STEP_IDS
from joinops.requests.steprecords import Outcome, StepRecords
from joinops.requests.store import Request

PREFIX = "joinops:bot:step-replies:"  # + request id: a hash, step → StepReply (JSON)
STILL_RUNNING = frozenset({EventKind.STEP_STARTED, EventKind.STEP_RETRYING})


@dataclass(frozen=True)
class StepReply:
    ts: str
    text: str  # what it shows
    open: bool  # the step runs: its next event edits this reply
    run: float  # when the run it shows started (its step record's `started`); 0: not known
    at: float  # the last event it shows


class StepReplies:
    def __init__(self, redis: Redis, records: StepRecords, messages: RequestMessages) -> None:
        self.redis = redis
        self.records = records
        self.messages = messages

    def say(self, request: Request, event: Event) -> bool:
        """Show a step event (bot.replies.STEP_EVENTS) in its step's reply; whether Slack shows
        it."""
        shown = self._shown(request, event)
        known = self.known(request.id).get(event.step)
        ours = known is not None and (
            known.open or known.at == event.at or (shown.run > 0 and known.run == shown.run)
        )
        if known is not None and ours:
            if known.text == shown.text or (shown.open and not known.open):
                return True  # shown already: the same words, or the end of this very run
            if self.messages.edit_reply(request, known.ts, shown.text):
                self._keep(request.id, event.step, StepReply(**{**asdict(shown), "ts": known.ts}))
                return True
        return self._post(request, event)

    def _post(self, request: Request, event: Event) -> bool:
        """A new reply for the event's step, rendered once Slack's posting budget lets it go:
        with the steps after it that ended meanwhile (the lane was behind), one line each."""
        with self._budget(request.channel):
            shown = self._shown(request, event)
            group = [(event.step, shown)]
            if not shown.open:
                group += self._ended_after(request, event.step, shown.run)
            ts = self.messages.reply(request, "\n".join(reply.text for _, reply in group))
        if ts is None:
            return False
        for step, reply in group:
            self._keep(request.id, step, replace(reply, ts=ts))
        return True

    def _ended_after(self, request: Request, step: str, run: float) -> list[tuple[str, StepReply]]:
        """The steps after `step`, in order, that already succeeded in this run (or a later one)
        and have no reply yet; up to the first that has not."""
        known = self.known(request.id)
        ended = []
        for later in STEP_IDS[STEP_IDS.index(step) + 1 :] if step in STEP_IDS else []:
            record = self.records.get(request.id, later)
            if record.outcome is not Outcome.SUCCEEDED or record.started < run:
                break
            if later in known and known[later].run == record.started:
                break  # shown already (its own reply)
            text = done_reply(later, record.message, record.seconds)
            ended.append((later, StepReply("", text, False, record.started, record.finished)))
        return ended

    def _budget(self, channel: str) -> AbstractContextManager[None]:
        """Wait for the channel's posting token first, so what is posted is what is true then."""
        client = self.messages.ctx.client
        if isinstance(client, PacedWebClient):
            return client.pacing.prepaid("chat.postMessage", channel)
        return nullcontext()

    def close(self, request: Request, event: Event) -> None:
        """The request ended (`event`): each step reply still shown running says it stopped."""
        for step, reply in self.known(request.id).items():
            text = stopped_reply(step, event.state)
            if reply.open and self.messages.edit_reply(request, reply.ts, text):
                self._keep(request.id, step, StepReply(reply.ts, text, False, reply.run, event.at))

    def known(self, request_id: str) -> dict[str, StepReply]:
        """The request's step replies, by step."""
        found = self.redis.hgetall(PREFIX + request_id)
        replies = {}
        for step, raw in found.items():
            try:
                replies[_s(step)] = StepReply(**json.loads(_s(raw)))
            except (ValueError, TypeError):
                continue  # not ours to read: as if there were none (a new reply is posted)
        return replies

    def _shown(self, request: Request, event: Event) -> StepReply:
        """What the step's reply shows after `event` (its ts aside)."""
        record = self.records.get(request.id, event.step)
        this_run = bool(record.started) and record.started <= event.at
        run = record.started if this_run else 0.0
        if event.kind in STILL_RUNNING and this_run and record.outcome is Outcome.SUCCEEDED:
            text = done_reply(event.step, record.message, record.seconds)  # ended meanwhile
            return StepReply("", text, False, run, event.at)
        return StepReply("", step_reply(event), event.kind in STILL_RUNNING, run, event.at)

    def _keep(self, request_id: str, step: str, reply: StepReply) -> None:
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(PREFIX + request_id, step, json.dumps(asdict(reply)))
            pipe.expire(PREFIX + request_id, TTL)
            pipe.execute()


def _s(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
