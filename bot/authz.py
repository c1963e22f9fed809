"""Who is who: the configured approvers and requesters, by user ID or as members of user groups.

`approvers` (and `requesters.groups`) in the configuration may name user groups (`S…`). A
group's members are looked up with `usergroups.users.list` and kept for `ttl` seconds in one
cache that both lists share, so a burst of clicks costs one lookup and a change to the group
shows within a minute. A failed lookup is not cached and grants nothing: when in doubt, nobody
is an approver, nor a requester.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackRequestError

log = logging.getLogger(__name__)

GROUP_TTL = 60.0  # seconds a group's member list is trusted
LOOKUP_TIMEOUT = 2  # seconds for one member lookup: it may run before an ack (Slack waits 3 s)


def lookup_client(client: WebClient) -> WebClient:
    """A client for member lookups: the bot's token and API URL, one short try, no waiting out a
    rate limit — a lookup may stand between a click and its ack, and a failed one grants
    nothing, so the person is told to try again rather than Slack timing out on us."""
    return WebClient(
        token=client.token,
        base_url=client.base_url,
        timeout=LOOKUP_TIMEOUT,
        ssl=client.ssl,
        proxy=client.proxy,
        headers=client.headers,
        retry_handlers=[],
    )


class GroupMembers:
    """The members of user groups, looked up in Slack and remembered for `ttl` seconds."""

    def __init__(
        self,
        client: WebClient,
        *,
        ttl: float = GROUP_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._ttl = ttl
        self._clock = clock
        self._members: dict[str, tuple[float, frozenset[str]]] = {}
        self._lock = threading.Lock()

    def of(self, group: str) -> frozenset[str] | None:
        """The members of `group`; None when Slack could not say (nothing is cached then)."""
        now = self._clock()
        with self._lock:
            cached = self._members.get(group)
        if cached is not None and now - cached[0] < self._ttl:
            return cached[1]
        try:
            answer = self._client.usergroups_users_list(usergroup=group)
        except (SlackApiError, SlackRequestError, OSError) as e:
            log.warning("cannot list the members of user group %s: %s", group, e)
            return None
        members = frozenset(str(u) for u in answer.get("users") or [])
        with self._lock:
            self._members[group] = (now, members)
        return members

    def member_of(self, user_id: str, groups: Sequence[str]) -> tuple[bool, list[str]]:
        """Is `user_id` in any of `groups`? Also the groups whose members could not be listed."""
        unknown = []
        for group in groups:
            members = self.of(group)
            if members is None:
                unknown.append(group)
            elif user_id in members:
                return True, []
        return False, unknown


class Approvers:
    def __init__(
        self,
        configured: Sequence[str],
        client: WebClient,
        *,
        ttl: float = GROUP_TTL,
        clock: Callable[[], float] = time.monotonic,
        members: GroupMembers | None = None,
    ) -> None:
        self.users = frozenset(a for a in configured if not a.startswith("S"))
        self.groups = tuple(a for a in configured if a.startswith("S"))
        self.members = members or GroupMembers(client, ttl=ttl, clock=clock)

    @property
    def configured(self) -> list[str]:
        return sorted(self.users) + list(self.groups)

    def includes(self, user_id: str) -> bool:
        """Is `user_id` an approver? Calls Slack only for groups whose members are not cached."""
        return self.check(user_id)[0]

    def check(self, user_id: str) -> tuple[bool, list[str]]:
        """Is `user_id` an approver; if not, which approver groups could not be listed."""
        if user_id in self.users:
            return True, []
        return self.members.member_of(user_id, self.groups)
