"""Which render of a root message Slack shows: a version per message, so an older one never stays.

Each render of a message takes the next number of its counter (`joinops:bot:render:<id>:seq`)
before it reads the record, so a higher number read a record at least as new. Right before its
`chat.update` is sent a render checks the highest version Slack already shows, and steps back
if that is newer than its own; once Slack answered, it records its own version. A call held up
in Slack's retries for longer than the render lock (bot/message.py) may still land after a newer
one: then the recording says so (`applied` is True) and the message is rendered again, from the
record as it is then. Whoever renders last, the message ends showing the newest state.
"""

from __future__ import annotations

import enum

from redis import Redis
from slack_sdk.errors import SlackApiError

from bot.token_state import FATAL

PREFIX = "joinops:bot:render:"  # + message id + ":seq" or ":shown"
TTL = 7 * 86400
# Record `version` as shown unless a newer one is; answer the version shown before.
_RECORD = """
local shown = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > shown then redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) end
return shown
"""


class Outcome(enum.Enum):
    UPDATED = "updated"  # Slack shows the newest render (this one or a newer one)
    GONE = "gone"  # nothing to update, or Slack refused it for good (`message_not_found`, …)
    FAILED = "failed"  # worth another try later: Slack failing, Redis down, overtaken again


class Versions:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._record = redis.register_script(_RECORD)

    def next(self, message_id: str) -> int:
        """The version of a render about to read the record."""
        key = PREFIX + message_id + ":seq"
        with self.redis.pipeline() as pipe:
            pipe.incr(key)
            pipe.expire(key, TTL)
            version, _ = pipe.execute()
        return int(version)

    def superseded(self, message_id: str, version: int) -> bool:
        """Whether Slack already shows a newer render than `version`."""
        shown = self.redis.get(PREFIX + message_id + ":shown")
        return shown is not None and int(shown) > version

    def applied(self, message_id: str, version: int) -> bool:
        """Record `version` as shown; True when a newer one was shown before it landed (it
        went back: the message is to be rendered again)."""
        shown = self._record(keys=[PREFIX + message_id + ":shown"], args=[version, TTL])
        return int(shown) > version


def worth_again(error: Exception) -> bool:
    """Whether a failed `chat.update` may succeed later: Slack failing or limiting (after the
    client's own retries), the connection, or a refused token (until a valid one is back) — not
    an answer Slack gave on purpose about this message (`message_not_found`, `msg_too_long`)."""
    if not isinstance(error, SlackApiError):
        return True
    status = getattr(error.response, "status_code", 200)
    return status == 429 or status >= 500 or error.response.get("error") in FATAL
