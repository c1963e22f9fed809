"""Is the bot's Slack token still accepted? A refused token is fatal, not a warning.

Slack answers `token_revoked`, `account_inactive`, `invalid_auth`, `not_authed` or
`token_expired` to every call once the app was uninstalled or reinstalled, its token rotated, or
its bot user deactivated. Then nothing the bot says reaches Slack: the relay keeps its entries
(unacknowledged, in Redis) instead of marking them done, the probes fail with the reason (a
restart picks up a new token from its Secret), and `joinops serve` says so once, loudly. The
first call Slack accepts again clears it.
"""

from __future__ import annotations

import logging
import threading

log = logging.getLogger(__name__)

FATAL = frozenset(
    {"token_revoked", "account_inactive", "invalid_auth", "not_authed", "token_expired"}
)


class TokenState:
    def __init__(self) -> None:
        self._refused: str | None = None
        self._lock = threading.Lock()

    def refused(self, error: str) -> None:
        with self._lock:
            first, self._refused = self._refused is None, error
        if first:
            log.error(
                "Slack refuses the bot token (%s): nothing reaches Slack until a valid token is "
                "back; progress waits in Redis. Reinstall the app or update SLACK_BOT_TOKEN, "
                "then restart",
                error,
            )

    def accepted(self) -> None:
        with self._lock:
            was, self._refused = self._refused, None
        if was is not None:
            log.warning("Slack accepts the bot token again; delivering what waited")

    def problem(self) -> str | None:
        """Why nothing can be said in Slack now, for the probes; None while the token works."""
        refused = self._refused
        return f"Slack refuses the bot token ({refused})" if refused else None
