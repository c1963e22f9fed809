"""The request message in the channel: posted once, then updated in place, and its thread.

What the message shows is derived from the request record (the source of truth) each time it is
rendered, under a short per-request Redis lock, and each render has a version
(bot/root_version.py): one that would land over a newer render steps back, and one Slack's
retries held past the lock, landing over a newer one after all, is followed by a fresh render.
So an approval click and the relay racing each other cannot leave a stale status behind. Each kind
(a migration, an Ignition file, a batch) is built in one pass: its view (`bot.views`), then its
blocks (`bot.render`).
"""

from __future__ import annotations

import contextlib
import logging

from redis.exceptions import LockError, LockNotOwnedError
from slack_sdk.errors import SlackApiError, SlackRequestError
from slack_sdk.models.blocks import Block

from bot import batch_record, slack_limits
from bot.context import BotContext
from bot.post_once import PostOnce
from bot.refresher import hand_over
from bot.render import batch as render_batch
from bot.render import ignition as render_ignition
from bot.render import pages as render_pages
from bot.render import request as render_request
from bot.root_version import Outcome, Versions, worth_again
from bot.texts import batch as batch_texts
from bot.views import batch as batch_views
from bot.views import ignition as ignition_views
from bot.views import request as request_views
from joinops.ignition import request as ir
from joinops.requests.asks import MigrationAsk
from joinops.requests.store import Request
from joinops.rules.check import Verdict

log = logging.getLogger(__name__)

LOCK_SECONDS = 30  # the longest one render-and-update may hold the message
CATCH_UPS = 3  # renders in a row, when each lands over a newer one, before trying again later
BATCH = "batch"  # the kind of a request for several nodes (joinops.rules.batch)
SLACK_ERRORS = (SlackApiError, SlackRequestError, OSError)


def slack_error(error: Exception) -> str:
    """Slack's error code (`not_in_channel`), or the kind of failure when there is none."""
    if isinstance(error, SlackApiError):
        return str(error.response.get("error") or "error")
    return type(error).__name__


class RequestMessages:
    """Posts request messages and thread replies; keeps the root message current."""

    def __init__(self, ctx: BotContext) -> None:
        self.ctx = ctx
        self.versions = Versions(ctx.redis)
        self.replies = PostOnce(ctx.client)  # thread replies: once, in order (bot/post_once.py)

    def post_refusal(
        self, channel: str, requester: str, ask: MigrationAsk, verdict: Verdict
    ) -> str:
        view = request_views.refusal_view(requester, ask, verdict)
        return self.post(channel, view.fallback, render_request.request_message(view))

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
        approvers = self.ctx.settings.approvers  # mentioned while it waits: notified
        if request.kind == ir.KIND:
            ignition = ignition_views.ignition_view(request, approvers)
            return ignition.fallback, render_ignition.ignition_message(ignition)
        if request.kind == BATCH:
            kids = batch_record.children(self.ctx.store, request)
            batch = batch_views.stored_view(
                request, kids, self.ctx.settings.max_parallel, approvers
            )
            return batch.fallback, render_batch.batch_message(batch)
        view = request_views.request_view(request, approvers)
        return view.fallback, render_request.request_message(view)

    def batch_pages(self, request: Request, final: bool = False) -> list[list[Block]]:
        """A batch's table and findings in full, paged, when its root only summarises them
        (Slack's limits, `bot.render.batch`); [] when the root holds them. `final`: the table
        as the batch ended, for the thread's last word."""
        kids = batch_record.children(self.ctx.store, request)
        batch = batch_views.stored_view(request, kids, self.ctx.settings.max_parallel)
        if final:
            return render_batch.thread_pages(batch, batch_texts.final_table_page, False)
        return render_batch.thread_pages(batch)

    def post_pages(self, channel: str, thread_ts: str, pages: list[list[Block]]) -> None:
        """Post each page as one reply in the thread `thread_ts`. A failure is logged."""
        for page in pages:
            try:
                self.replies.post(channel, thread_ts, render_pages.text_of(page), page)
            except SLACK_ERRORS as e:
                log.warning("could not post a page in the thread %s: %s", thread_ts, e)
                return

    def refresh(self, request_id: str) -> bool:
        """Render the root message from the record and update it in place. Never raises. An
        update that failed for a reason that passes is handed to the relay's refresher (kept
        wanted in Redis, bot/refresher.py), which tries it again until Slack shows it."""
        outcome = self.update_root(request_id)
        if outcome is Outcome.FAILED:
            hand_over(self.ctx.redis, request_id)
        return outcome is Outcome.UPDATED

    def update_root(self, request_id: str) -> Outcome:
        """`refresh`, saying whether a failure is worth another try (the refresher's). A render
        that landed over a newer one (bot/root_version.py) is followed by a fresh one."""
        try:
            for _ in range(CATCH_UPS):
                outcome = self._locked_render(request_id)
                if outcome is not None:
                    return outcome
        except SLACK_ERRORS as e:
            log.warning("request %s: could not update its message: %s", request_id, e)
            return Outcome.FAILED if worth_again(e) else Outcome.GONE
        except Exception:
            log.exception("request %s: could not update its message", request_id)
        return Outcome.FAILED

    def _locked_render(self, request_id: str) -> Outcome | None:
        """One render under the message's lock; None when it went back over a newer one."""
        lock = self.ctx.redis.lock(
            f"joinops:bot:message-lock:{request_id}",
            timeout=LOCK_SECONDS,
            blocking_timeout=LOCK_SECONDS * 1.5,  # outlasts a holder stuck in Slack
        )
        if not lock.acquire():
            raise LockError("the message stayed locked")
        try:
            return self._render(request_id)
        finally:
            with contextlib.suppress(LockNotOwnedError):  # held past its time: Slack was slow
                lock.release()

    def _render(self, request_id: str) -> Outcome | None:
        version = self.versions.next(request_id)  # taken before the record is read
        request = self.ctx.store.get(request_id)
        if request is None or not request.channel or not request.message_ts:
            return Outcome.GONE
        text, block_list = self.rendered(request)
        if self.versions.superseded(request_id, version):
            return Outcome.UPDATED  # Slack shows a newer render already: this one would go back
        self.ctx.client.chat_update(
            channel=request.channel, ts=request.message_ts, text=text, blocks=block_list
        )
        return None if self.versions.applied(request_id, version) else Outcome.UPDATED

    def reply(self, request: Request, text: str) -> str | None:
        """A reply in the request's thread; its ts, or None when it was not posted (a failure is
        logged, never raised)."""
        # a loan's return has its own message inside the loan's thread: it replies there
        thread_ts = request.extra.get("thread_ts") or request.message_ts or ""
        first, *rest = render_pages.reply_pages(text)  # a long reply: several that each fit
        try:
            ts = self.replies.post(
                request.channel, thread_ts, text[: slack_limits.FALLBACK_TEXT], first
            )
        except SLACK_ERRORS as e:
            log.warning("request %s: could not post in its thread: %s", request.id, e)
            return None
        self.post_pages(request.channel, thread_ts, rest)
        return ts

    def edit_reply(self, request: Request, ts: str, text: str) -> bool:
        """Say `text` in the thread's reply `ts` instead of what it said: an edit, which
        notifies nobody. Its first page only (a step's line fits one). Logged, never raised."""
        page = render_pages.reply_pages(text)[0]
        try:
            self.ctx.client.chat_update(
                channel=request.channel, ts=ts, text=text[: slack_limits.FALLBACK_TEXT], blocks=page
            )
        except SLACK_ERRORS as e:
            log.warning("request %s: could not edit its reply %s: %s", request.id, ts, e)
            return False
        return True
