"""What the relay did with each event, by its stream entry id: claimed, posted, done.

The record is written before and after the event's thread reply: `claimed` when the relay takes
the entry, `posted` once Slack accepted the reply, `done` when everything the event asked for
(the reply, the root's update) was handled. A relay that meets an entry again — its own pending
entries after a restart, or one taken from a dead consumer — acts on the record: `done` is
acknowledged and skipped; `posted` does what is left but not the reply; `claimed` (the reply was
never confirmed) does it all. So a crash between the claim and the post re-posts exactly the
missing reply, and a redelivery never posts one twice.
"""

from __future__ import annotations

from redis import Redis

PREFIX = "joinops:bot:relayed:"  # + stream entry id
TTL = 7 * 86400
CLAIMED, POSTED, DONE = "claimed", "posted", "done"
_LEGACY_DONE = "1"  # what relays before the ledger wrote: handled


class Ledger:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    def claim(self, entry_id: str) -> str | None:
        """Claim the entry; None when this is its first claim, else what was recorded."""
        if self.redis.set(PREFIX + entry_id, CLAIMED, nx=True, ex=TTL):
            return None
        found = self.redis.get(PREFIX + entry_id)
        state = found.decode() if isinstance(found, bytes) else str(found or CLAIMED)
        return DONE if state == _LEGACY_DONE else state

    def posted(self, entry_id: str) -> None:
        self.redis.set(PREFIX + entry_id, POSTED, ex=TTL)

    def done(self, entry_id: str) -> None:
        self.redis.set(PREFIX + entry_id, DONE, ex=TTL)
