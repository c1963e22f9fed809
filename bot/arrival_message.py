"""The announcement of a host in the arrivals channel: posted once (a post whose answer was lost
is looked for before it is tried again: bot/post_once.py), updated in place from the host's
record; and the one-off reports of files joinops cannot use."""

from __future__ import annotations

import logging

from bot.context import BotContext
from bot.message import SLACK_ERRORS
from bot.post_once import PostOnce
from bot.render import arrival as render_arrival
from bot.render import blocks as render_blocks
from bot.views import arrival as arrival_views
from joinops.arrivals.store import Arrival, ArrivalStore

log = logging.getLogger(__name__)


class ArrivalMessages:
    def __init__(self, ctx: BotContext, store: ArrivalStore) -> None:
        self.ctx = ctx
        self.store = store
        self.once = PostOnce(ctx.client)

    def post(self, channel: str, arrival: Arrival) -> str:
        """Post the announcement; returns its ts. Raises the SDK's errors when it was not
        posted."""
        view = arrival_views.announcement_view(arrival)
        blocks = render_arrival.announcement(view)
        return self.once.post_root(channel, view.fallback, blocks)

    def refresh(self, cluster: str) -> None:
        """Render the announcement from the record again, in place. Never raises."""
        arrival = self.store.get(cluster)
        if arrival is None or not arrival.message_ts:
            return
        view = arrival_views.announcement_view(arrival)
        try:
            self.ctx.client.chat_update(
                channel=arrival.channel,
                ts=arrival.message_ts,
                text=view.fallback,
                blocks=render_arrival.announcement(view),
            )
        except SLACK_ERRORS as e:
            log.warning("arrival %s: could not update its announcement: %s", cluster, e)

    def report(self, channel: str, text: str) -> bool:
        """A plain message in the channel (a file that cannot be used). Never raises."""
        try:
            self.ctx.client.chat_postMessage(
                channel=channel, text=text, blocks=render_blocks.reply(text), unfurl_links=False
            )
            return True
        except SLACK_ERRORS as e:
            log.warning("could not post to the arrivals channel %s: %s", channel, e)
            return False
