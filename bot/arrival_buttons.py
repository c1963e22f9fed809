"""The announcement's buttons: **Move into TARGET as ROLE** and **Dismiss**.

Move opens an ordinary request for the host's node, asked by whoever clicked (bot/migration.py:
the rules are checked again now, an approver other than the clicker approves it, it expires as
any request does); the request's message is posted in the arrivals channel. Dismiss closes the
announcement. Either is a compare-and-set on the host's record (joinops.arrivals.store): of two
clicks one counts, the other is told what happened. Who may click: anyone who may use `/join`
(bot/access.py stands in front).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from bot import parsed
from bot.arrival_message import ArrivalMessages
from bot.context import BotContext
from bot.invocation import Invocation
from bot.migration import Migrations
from bot.texts import arrivals as texts
from joinops.arrivals.host import HostFacts
from joinops.arrivals.store import Arrival, ArrivalStore, State
from joinops.requests.model import Role

log = logging.getLogger(__name__)

Respond = Callable[..., Any]


class ArrivalButtons:
    def __init__(self, ctx: BotContext, migrations: Migrations) -> None:
        self.ctx = ctx
        self.migrations = migrations
        self.store = ArrivalStore(ctx.redis, ctx.clock)
        self.messages = ArrivalMessages(ctx, self.store)

    # ---- listeners (bolt injects the arguments by name) ------------------------------------

    def on_move(self, ack: Callable[..., None], body: dict[str, Any], respond: Respond) -> None:
        ack()
        user, cluster = _clicked(body)
        answer = self.move(user, cluster, respond)
        if answer:
            _tell(respond, answer)

    def on_dismiss(self, ack: Callable[..., None], body: dict[str, Any], respond: Respond) -> None:
        ack()
        user, cluster = _clicked(body)
        answer = self.dismiss(user, cluster)
        if answer:
            _tell(respond, answer)

    # ---- what a click does -----------------------------------------------------------------

    def move(self, user: str, cluster: str, respond: Respond) -> str | None:
        arrival = self.store.get(cluster)
        if arrival is None:
            return texts.unknown_host(cluster)
        arrivals = self.ctx.settings.arrivals
        facts = HostFacts.from_json(arrival.facts)
        node = facts.node if facts else None
        if arrivals is None or arrivals.propose is None or node is None:
            return texts.no_longer_proposed(cluster)
        if not self.store.transition(cluster, State.REQUESTED, (State.ANNOUNCED,), by=user):
            return _already(self.store.get(cluster) or arrival)
        command = parsed.Migrate(
            (node.name,), cluster, arrivals.propose.to, Role(arrivals.propose.as_)
        )
        request = self.migrations.ask(Invocation(user, arrival.channel, respond), command)
        if request is None:  # refused now (its refusal is posted), or not posted: open again
            self.store.transition(cluster, State.ANNOUNCED, (State.REQUESTED,), by="")
        else:
            self.store.update(cluster, request_id=request.id)
            log.info("arrivals: %s asked to move %s as %s", user, cluster, request.id)
        self.messages.refresh(cluster)
        return None

    def dismiss(self, user: str, cluster: str) -> str | None:
        arrival = self.store.get(cluster)
        if arrival is None:
            return texts.unknown_host(cluster)
        if not self.store.transition(cluster, State.DISMISSED, (State.ANNOUNCED,), by=user):
            return _already(self.store.get(cluster) or arrival)
        self.messages.refresh(cluster)
        return None


def _clicked(body: dict[str, Any]) -> tuple[str, str]:
    return str(body["user"]["id"]), str(body["actions"][0].get("value") or "")


def _already(arrival: Arrival) -> str:
    return texts.already(arrival.cluster, str(arrival.state), arrival.by, arrival.request_id)


def _tell(respond: Respond, text: str) -> None:
    try:
        respond(text=text, response_type="ephemeral", replace_original=False)
    except Exception as e:  # a courtesy; what was done stands
        log.warning("could not answer a click: %s", e)
