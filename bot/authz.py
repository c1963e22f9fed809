"""Who may approve: the configured approvers, by user ID or as members of user groups.

`approvers` in the configuration holds user IDs (`U…`/`W…`) and user-group IDs (`S…`). A group's
members are looked up with `usergroups.users.list` and kept for `ttl` seconds, so a burst of
clicks costs one lookup, and a change to the group shows within a minute. A failed lookup is
not cached and grants nothing: when in doubt, nobody is an approver.
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


class Approvers:
    def __init__(
        self,
        configured: Sequence[str],
        client: WebClient,
        *,
        ttl: float = GROUP_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.users = frozenset(a for a in configured if not a.startswith("S"))
        self.groups = tuple(a for a in configured if a.startswith("S"))
        self._client = client
        self._ttl = ttl
        self._clock = clock
        self._members: dict[str, tuple[float, frozenset[str]]] = {}
        self._lock = threading.Lock()

    def includes(self, user_id: str) -> bool:
        """Is `user_id` an approver? Calls Slack only for groups whose members are not cached."""
        if user_id in self.users:
            return True
        return any(user_id in self._group(group) for group in self.groups)

    def _group(self, group: str) -> frozenset[str]:
        now = self._clock()
        with self._lock:
            cached = self._members.get(group)
        if cached is not None and now - cached[0] < self._ttl:
            return cached[1]
        try:
            answer = self._client.usergroups_users_list(usergroup=group)
        except (SlackApiError, SlackRequestError, OSError) as e:
            log.warning("approvers: cannot list the members of user group %s: %s", group, e)
            return frozenset()
        members = frozenset(str(u) for u in answer.get("users") or [])
        with self._lock:
            self._members[group] = (now, members)
        return members
