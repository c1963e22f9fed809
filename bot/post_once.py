"""A thread reply posted once and in its place, even when Slack's answer to the post is lost.

`chat.postMessage` is not retried when Slack may have acted on it (bot/slack_retry.py): a read
timeout, a connection dropped while waiting, a 5xx. Such a post may still land — seconds later,
after a reply posted behind it — or never. So before anything else is posted in that thread,
the reply is looked for (`conversations.replies`): a message of the bot's, after the newest
reply known in the thread, with the same text. Found, it counts as posted (its ts); not found,
it is posted again. A 5xx was Slack's answer, so what it did is done: one look. No answer at all
means the post may still be on its way: looks every `LOOK_EVERY` s for up to `look_for` s. The
thread ends with each line once, in order — unless Slack stores a post later than that (then it
shows twice), or the look itself fails (the `*:history` scopes missing: posted again, never
lost).

"The newest reply known" is the last one this process posted or found in the thread (the
thread's own ts after a restart): an identical line from before it is never taken for this one.

A message at the channel's top level (an arrival's announcement, `post_root`) is looked for the
same way among the channel's newest messages (`conversations.history`): a timed-out
announcement is not posted a second time with a live button nobody updates.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackRequestError

from bot.slack_retry import may_have_posted

log = logging.getLogger(__name__)

LOOK_FOR = 30.0  # seconds a post left unanswered is looked for before it is posted again
LOOK_EVERY = 1.0  # seconds between two looks (conversations.replies is Tier 3)
TRIES = 3  # posts of one reply, each after a look that did not find the one before
THREADS_KEPT = 2000  # threads whose newest reply is remembered
PAGES = 10  # pages of conversations.replies read in one look, at most
ROOT_LOOK_BACK = 100  # a channel's newest messages a top-level post is looked for among
_ERRORS = (SlackApiError, SlackRequestError, OSError)


class PostOnce:
    def __init__(
        self,
        client: WebClient,
        *,
        look_for: float = LOOK_FOR,
        look_every: float = LOOK_EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.look_for = look_for
        self.look_every = look_every
        self._clock = clock
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._newest: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._me: str | None = None

    def stop(self) -> None:
        """End any look under way (the reply is then posted again at once)."""
        self._stop.set()

    def post(self, channel: str, thread_ts: str, text: str, blocks: Sequence[Any]) -> str:
        """Post a reply in the thread `thread_ts`; its ts. Raises the SDK's error when it was
        not posted (nor found)."""
        for _ in range(TRIES - 1):
            try:
                return self._send(channel, thread_ts, text, blocks)
            except _ERRORS as e:
                if not may_have_posted(e):
                    raise
                answered = isinstance(e, SlackApiError)  # a 5xx: Slack is done with it
                log.warning("a reply in %s may have been posted (%s); looking for it", thread_ts, e)
            found = self._look(channel, thread_ts, text, answered)
            if found is not None:
                return self._known(channel, thread_ts, found)
        return self._send(channel, thread_ts, text, blocks)  # the last try: come what may

    def post_root(self, channel: str, text: str, blocks: Sequence[Any]) -> str:
        """Post a message at the channel's top level; its ts. A message of the bot's with this
        text among the channel's newest `ROOT_LOOK_BACK` is this one (a copy left by an earlier
        try that was not found in time is taken rather than posted again). Raises the SDK's
        error when it was not posted (nor found)."""
        for _ in range(TRIES - 1):
            try:
                return str(self._root(channel, text, blocks)["ts"])
            except _ERRORS as e:
                if not may_have_posted(e):
                    raise
                answered = isinstance(e, SlackApiError)
                log.warning("a message in %s may have been posted (%s); looking for it", channel, e)
            found = self._look_with(lambda: self._find_root(channel, text), answered)
            if found is not None:
                return found
        return str(self._root(channel, text, blocks)["ts"])

    def _root(self, channel: str, text: str, blocks: Sequence[Any]) -> Any:
        return self.client.chat_postMessage(
            channel=channel, text=text, blocks=blocks, unfurl_links=False
        )

    def _find_root(self, channel: str, text: str) -> str | None:
        me = self._bot_user()
        page = self.client.conversations_history(channel=channel, limit=ROOT_LOOK_BACK)
        for message in page.get("messages") or []:  # newest first
            if message.get("user") == me and message.get("text") == text:
                return str(message.get("ts") or "") or None
        return None

    def _send(self, channel: str, thread_ts: str, text: str, blocks: Sequence[Any]) -> str:
        answer = self.client.chat_postMessage(
            channel=channel, thread_ts=thread_ts, text=text, blocks=blocks, unfurl_links=False
        )
        return self._known(channel, thread_ts, str(answer["ts"]))

    def _look(self, channel: str, thread_ts: str, text: str, answered: bool) -> str | None:
        """The ts of the bot's reply with this text after the newest known, if Slack shows it."""
        return self._look_with(lambda: self._find(channel, thread_ts, text), answered)

    def _look_with(self, find: Callable[[], str | None], answered: bool) -> str | None:
        """`find` until it finds, once after an answer (a 5xx), for `look_for` s after none."""
        deadline = self._clock() + (0.0 if answered else self.look_for)
        while True:
            try:
                found = find()
            except _ERRORS as e:
                log.warning("could not look for a message (%s): posting it again", e)
                return None
            if found is not None or self._clock() >= deadline or self._stop.is_set():
                return found
            self._stop.wait(min(self.look_every, max(deadline - self._clock(), 0.0)))

    def _find(self, channel: str, thread_ts: str, text: str) -> str | None:
        me, cursor = self._bot_user(), None
        oldest = self._newest_known(channel, thread_ts)
        for _ in range(PAGES):
            page = self.client.conversations_replies(
                channel=channel, ts=thread_ts, oldest=oldest, limit=200, cursor=cursor
            )
            for message in page.get("messages") or []:
                ts = str(message.get("ts") or "")
                if ts != thread_ts and message.get("user") == me and message.get("text") == text:
                    return ts
            cursor = (page.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                return None
        return None

    def _bot_user(self) -> str:
        if self._me is None:
            self._me = str(self.client.auth_test()["user_id"])
        return self._me

    def _newest_known(self, channel: str, thread_ts: str) -> str:
        with self._lock:
            return self._newest.get((channel, thread_ts), thread_ts)

    def _known(self, channel: str, thread_ts: str, ts: str) -> str:
        with self._lock:
            key = (channel, thread_ts)
            if _later(ts, self._newest.get(key, thread_ts)):
                self._newest[key] = ts
                self._newest.move_to_end(key)
            while len(self._newest) > THREADS_KEPT:
                self._newest.popitem(last=False)
        return ts


def _later(ts: str, than: str) -> bool:
    return _key(ts) > _key(than)


def _key(ts: str) -> tuple[int, int]:
    """A Slack timestamp ("1733150000.000100") as numbers that compare exactly."""
    seconds, _, micros = ts.partition(".")
    try:
        return int(seconds), int((micros + "000000")[:6])
    except ValueError:
        return 0, 0
