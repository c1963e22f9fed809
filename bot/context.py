"""What every listener and the relay share: clients built once from settings, passed in."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from redis import Redis
from slack_sdk import WebClient

from bot.authz import Approvers, GroupMembers, lookup_client
from bot.checks import Checks
from bot.people import People, why_refused
from bot.token_state import TokenState
from joinops.clusters.registry import ClusterRegistry
from joinops.requests.audit import AuditLog
from joinops.requests.events import RedisEventLog
from joinops.requests.steprecords import StepRecords
from joinops.requests.store import RequestStore
from joinops.settings import Settings


@dataclass
class BotContext:
    settings: Settings
    redis: Redis
    clusters: ClusterRegistry
    client: WebClient
    store: RequestStore
    records: StepRecords
    events: RedisEventLog
    approvers: Approvers
    audit: AuditLog
    members: GroupMembers  # user groups' members, for approvers and requesters alike
    checks: Checks  # the cluster work behind a command, asked of a worker
    people: People  # who is a guest or from another organisation (users.info)
    token: TokenState  # does Slack still accept the bot token (bot/token_state.py)
    clock: Callable[[], float] = field(default=time.time)

    @classmethod
    def build(
        cls,
        settings: Settings,
        *,
        redis_client: Redis,
        clusters: ClusterRegistry,
        client: WebClient,
        clock: Callable[[], float] = time.time,
    ) -> BotContext:
        members = GroupMembers(lookup_client(client))
        return cls(
            settings=settings,
            redis=redis_client,
            clusters=clusters,
            client=client,
            store=RequestStore(redis_client, clock),
            records=StepRecords(redis_client, clock),
            events=RedisEventLog(redis_client),
            approvers=Approvers(settings.approvers, client, members=members),
            audit=AuditLog(redis_client, clock),
            members=members,
            checks=Checks(redis_client, settings.timeouts.check.total_seconds()),
            people=People(lookup_client(client)),
            token=getattr(client, "token_state", None) or TokenState(),
            clock=clock,
        )

    def standing(self, user_id: str, *, again: bool = False) -> str | None:
        """Why `user_id` may not use joinops ("guest", "external", "deactivated"), "" when they
        may, None when Slack could not say (looked up: after an ack only; `again`: now)."""
        found = self.people.look_up(user_id, again=again)
        if found is None:
            return None
        access = self.settings.access
        return why_refused(*found, access.allow_guests, access.allow_external)

    def known_standing(self, user_id: str) -> str | None:
        """`standing` from memory only (what an ack may use); None when it needs a lookup."""
        found = self.people.known(user_id)
        if found is None:
            return None
        access = self.settings.access
        return why_refused(*found, access.allow_guests, access.allow_external)

    def may_act_on(self, user_id: str, requester: str) -> bool:
        """Cancel and retry: the requester, or an approver."""
        return user_id == requester or self.approvers.includes(user_id)
