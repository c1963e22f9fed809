"""At most `policy.max_open_requests_per_user` requests open per person.

A request is open while it waits for approval, is approved or runs (a batch counts once, its
nodes not at all). The count is made after the ack, from the requests in Redis plus the asks
of that person this bot is still checking, under one lock: a burst of commands from one person
is acked in full, and exactly those beyond the limit are refused, each with an answer saying
why and what to do. The bot runs as one replica (docs/deploy.md), so its own asks in flight are
all there are.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from bot.context import BotContext
from bot.texts import answers as answers_texts


class OpenRequestLimit:
    def __init__(self, ctx: BotContext) -> None:
        self.ctx = ctx
        self._asking: Counter[str] = Counter()  # asks being checked now, by person
        self._lock = threading.Lock()

    @contextmanager
    def slot(self, user: str) -> Iterator[str | None]:
        """Hold one of `user`'s slots while their ask is checked and posted: yields None, or
        the refusal to tell them when every slot is taken (nothing is held then)."""
        limit = self.ctx.settings.policy.max_open_requests_per_user
        with self._lock:
            # below the limit, the number remembered settles it (bounded by the limit)
            recorded = self.ctx.store.open_count(user, exact_from=limit - self._asking[user])
            # an ask still being finished may be recorded already: never counted twice in what
            # the person reads
            if recorded + self._asking[user] >= limit:
                refusal: str | None = answers_texts.too_many_open(max(recorded, limit), limit)
            else:
                refusal = None
                self._asking[user] += 1
        if refusal is not None:
            yield refusal
            return
        try:
            yield None
        finally:
            with self._lock:
                self._asking[user] -= 1
                if not self._asking[user]:
                    del self._asking[user]
