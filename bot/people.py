"""Who a person is in the workspace: a full member, a guest, or someone from another
organisation — decided from Slack's own answers, never assumed.

Guests (single- and multi-channel: `is_ultra_restricted`, `is_restricted`) and members of other
organisations (Slack Connect: their `team_id` is not the installing team's, and, on Enterprise
Grid, their `enterprise_user.enterprise_id` not ours) use apps in shared channels like local
members. joinops hands out cluster join material, so they are refused unless the configuration
allows them (`access.allow_guests`, `access.allow_external`). A deactivated user is refused.

The answers come from `users.info` (scope `users:read`), remembered for `PERSON_TTL` seconds
(bot/lookups.py: single-flight, refreshed while in use), and the installing team from one
`auth.test`. When Slack cannot say, the person is refused: unknown is never allowed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackRequestError

from bot.lookups import Lookups

log = logging.getLogger(__name__)

PERSON_TTL = 600.0  # seconds a users.info answer is trusted
LOOKUP_WAIT = 4.0


@dataclass(frozen=True)
class Person:
    """What users.info says of one user that matters here."""

    team_id: str
    enterprise_id: str
    guest: bool
    deleted: bool


@dataclass(frozen=True)
class Home:
    """The installing workspace (auth.test)."""

    team_id: str
    enterprise_id: str

    def is_home_of(self, person: Person) -> bool:
        if person.team_id == self.team_id:
            return True
        return bool(self.enterprise_id) and person.enterprise_id == self.enterprise_id


def why_refused(person: Person, home: Home, allow_guests: bool, allow_external: bool) -> str:
    """ "deactivated", "external", "guest", or "" when this person may use joinops."""
    if person.deleted:
        return "deactivated"
    if not allow_external and not home.is_home_of(person):
        return "external"
    if not allow_guests and person.guest:
        return "guest"
    return ""


class People:
    def __init__(
        self,
        client: WebClient,
        *,
        ttl: float = PERSON_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._people: Lookups[Person] = Lookups(
            self._user, ttl=ttl, wait=LOOKUP_WAIT, clock=clock, name="joinops-person-refresh"
        )
        self._homes: Lookups[Home] = Lookups(
            self._home, ttl=float("inf"), wait=LOOKUP_WAIT, clock=clock
        )

    def known(self, user_id: str) -> tuple[Person, Home] | None:
        """From memory (what an ack may use): None when a lookup is needed."""
        person, home = self._people.known(user_id), self._homes.known("")
        return (person, home) if person is not None and home is not None else None

    def look_up(self, user_id: str, *, again: bool = False) -> tuple[Person, Home] | None:
        """After the ack: None when Slack could not say. `again`: asked of Slack now, whatever
        is remembered (before handing out join material)."""
        home = self._homes.get("")
        person = self._people.get(user_id, again=again) if home is not None else None
        return (person, home) if person is not None and home is not None else None

    def _user(self, user_id: str) -> Person | None:
        try:
            user = self._client.users_info(user=user_id).get("user") or {}
        except (SlackApiError, SlackRequestError, OSError) as e:
            log.warning("cannot look up user %s: %s", user_id, e)
            return None
        return Person(
            team_id=str(user.get("team_id") or ""),
            enterprise_id=str((user.get("enterprise_user") or {}).get("enterprise_id") or ""),
            guest=bool(user.get("is_restricted") or user.get("is_ultra_restricted")),
            deleted=bool(user.get("deleted")),
        )

    def _home(self, _: str) -> Home | None:
        try:
            answer = self._client.auth_test()
        except (SlackApiError, SlackRequestError, OSError) as e:
            log.warning("cannot tell the installing workspace (auth.test): %s", e)
            return None
        return Home(str(answer.get("team_id") or ""), str(answer.get("enterprise_id") or ""))
