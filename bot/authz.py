"""Who is who: the configured approvers and requesters, by user ID or as members of user groups.

`approvers` (and `requesters.groups`) in the configuration may name user groups (`S…`). A
group's members are looked up with `usergroups.users.list` and kept for `ttl` seconds in one
cache that both lists share. Two ways to ask:

- `known_*` answers from memory only — what an ack may use (it must not wait on Slack). A group
  never listed, or listed longer than `ttl` ago, is *unsettled*: the caller acknowledges first
  and asks again with the looking-up form after the ack. An entry past `REFRESH_AT` of its ttl
  is refreshed in the background while it is still used, so a group in use stays settled.
- `member_of`, `check`, `includes` look a group up when it is not fresh, after the ack.

Lookups are single-flight (bot/lookups.py): while one group's lookup is in flight, every other
asker waits for its answer instead of calling Slack again, so a burst of clicks costs one call
per group. A failed lookup is not cached and grants nothing: when in doubt, nobody is an
approver, nor a requester.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackRequestError

from bot.lookups import Lookups

log = logging.getLogger(__name__)

GROUP_TTL = 60.0  # seconds a group's member list is trusted
LOOKUP_TIMEOUT = 2  # seconds for one member lookup


def lookup_client(client: WebClient) -> WebClient:
    """A client for member lookups: the bot's token and API URL, one short try, no waiting out a
    rate limit — a failed lookup grants nothing, so the person is told to try again rather than
    waiting on Slack."""
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
        self._lookups: Lookups[frozenset[str]] = Lookups(
            self._call_slack,
            ttl=ttl,
            wait=LOOKUP_TIMEOUT * 2,
            clock=clock,
            name="joinops-group-refresh",
        )

    # ---- from memory (before an ack) --------------------------------------------------------

    def known(self, group: str) -> frozenset[str] | None:
        """The members of `group` if listed less than `ttl` ago; None otherwise. Never calls
        Slack here: an entry nearing its ttl is refreshed on a thread of its own."""
        return self._lookups.known(group)

    def known_member_of(self, user_id: str, groups: Sequence[str]) -> bool | None:
        """Is `user_id` in any of `groups`, from memory: True, False, or None when a group it is
        not found in is unsettled (not listed, or too long ago)."""
        unsettled = False
        for group in groups:
            members = self.known(group)
            if members is None:
                unsettled = True
            elif user_id in members:
                return True
        return None if unsettled else False

    # ---- looking up (after an ack) ----------------------------------------------------------

    def of(self, group: str) -> frozenset[str] | None:
        """The members of `group`, looked up when not fresh; None when Slack could not say."""
        return self._lookups.get(group)

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

    def _call_slack(self, group: str) -> frozenset[str] | None:
        try:
            answer = self._client.usergroups_users_list(usergroup=group)
        except (SlackApiError, SlackRequestError, OSError) as e:
            log.warning("cannot list the members of user group %s: %s", group, e)
            return None
        return frozenset(str(u) for u in answer.get("users") or [])


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

    def known(self, user_id: str) -> bool | None:
        """Is `user_id` an approver, from memory only; None when that needs a lookup."""
        if user_id in self.users:
            return True
        return self.members.known_member_of(user_id, self.groups)
