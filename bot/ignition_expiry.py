"""An Ignition file sent by Slack is deleted from Slack (`files.delete`) when its token expires.

The file in the requester's direct messages carries a bootstrap token; once the token has
expired the file is useless, and nothing should keep a secret around that long anyway. When
`bot.ignition` has delivered a file it calls `remember`: the file's id and DM channel go with the
request, and the request id into a sorted set scored by the moment the token stops being valid.
Redis keeps both, so a restarted bot loses no deletion and does the overdue ones at once.

The relay's thread asks `due()` about once a second and runs each due deletion on the request's
lane (`delete`, which talks to Slack). `due()` leases what it hands out for `RETRY` seconds: a
deletion Slack did not answer, or one lost with its bot, is tried again then. A file already
gone (`file_not_found`, `file_deleted`: someone deleted it by hand) counts as deleted. Once
deleted, the DM says so, the request records when (`ignition_deleted_at`) and the audit trail
has it.
"""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError

from bot.context import BotContext
from bot.message import SLACK_ERRORS
from bot.render import blocks as render_blocks
from bot.texts import ignition as ignition_texts
from joinops.ignition import request as ir
from joinops.requests.audit import Action
from joinops.requests.store import Request

log = logging.getLogger(__name__)

PENDING = "joinops:bot:ignition-files"  # sorted set: request id -> when to delete its file
FILE_ID = "ignition_file_id"  # with the request: the file's Slack id…
DM = "ignition_dm"  # …the DM channel it was shared in…
DELETED_AT = "ignition_deleted_at"  # …and, once deleted, when (epoch seconds)
RETRY = 60.0  # seconds before a deletion handed out and not finished is handed out again
GONE = frozenset({"file_not_found", "file_deleted"})  # deleted already: nothing left to do
BATCH = 50
# KEYS: the set. ARGV: now, leased until, how many. The members due by now, rescored to the lease.
_LEASE_DUE = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
for _, member in ipairs(due) do redis.call('ZADD', KEYS[1], 'XX', ARGV[2], member) end
return due
"""


class FileExpiry:
    def __init__(self, ctx: BotContext) -> None:
        self.ctx = ctx

    def remember(self, request_id: str, file_id: str, dm: str, at: float) -> None:
        """The file `file_id`, shared in `dm`, is to be deleted at `at` (its token's expiry)."""
        self.ctx.store.update(request_id, **{"x:" + FILE_ID: file_id, "x:" + DM: dm})
        self.ctx.redis.zadd(PENDING, {request_id: at})

    def due(self) -> list[str]:
        """Requests whose file is due for deletion now, each leased for `RETRY` seconds (read and
        leased in one script: two relays never both get one)."""
        now = self.ctx.clock()
        lease = self.ctx.redis.register_script(_LEASE_DUE)
        raw = lease(keys=[PENDING], args=[now, now + RETRY, BATCH])
        return [r.decode() if isinstance(r, bytes) else str(r) for r in raw]

    def delete(self, request_id: str) -> bool:
        """Delete the request's file from Slack and say so in the DM; False to try again."""
        request = self.ctx.store.get(request_id)
        file_id = request.extra.get(FILE_ID, "") if request is not None else ""
        if request is None or not file_id:
            self.ctx.redis.zrem(PENDING, request_id)  # nothing (left) to delete
            return True
        if not self._delete_file(request, file_id):
            return False
        now = self.ctx.clock()
        self.ctx.store.update(request.id, **{"x:" + DELETED_AT: str(now)})
        self.ctx.audit.record(
            Action.FILE_DELETED,
            "joinops",
            request,
            f"Ignition file {file_id} deleted from Slack: its token expired",
        )
        self.ctx.redis.zrem(PENDING, request_id)
        self._say(request, now)  # last: said at most once
        return True

    def _delete_file(self, request: Request, file_id: str) -> bool:
        try:
            self.ctx.client.files_delete(file=file_id)
        except SlackApiError as e:
            if e.response.get("error") in GONE:
                return True
            log.warning("request %s: Ignition file %s not deleted: %s", request.id, file_id, e)
            return False
        except SLACK_ERRORS as e:
            log.warning("request %s: Ignition file %s not deleted: %s", request.id, file_id, e)
            return False
        return True

    def _say(self, request: Request, now: float) -> None:
        dm = request.extra.get(DM, "")
        if not dm:
            return
        text = ignition_texts.deleted_dm(
            ir.filename(request),
            request.id,
            request.target,
            float(request.extra.get(ir.VALID_UNTIL) or now),
            now,
        )
        try:
            self.ctx.client.chat_postMessage(
                channel=dm, text=text, blocks=render_blocks.reply(text), unfurl_links=False
            )
        except SLACK_ERRORS as e:
            log.warning("request %s: the DM could not say its file was deleted: %s", request.id, e)
