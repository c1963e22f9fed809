"""The simulated workspace: its state, and the primitives the Web API methods change it with.

The methods themselves are functions of (workspace, params), one module per family (chat,
people, views, files, response_url), listed by name in `slacksim.methods`. Plain Python, no
HTTP and no locking: `SlackSim` serialises every call into it. Answers follow
the shapes of Slack's documented responses (https://docs.slack.dev/reference/methods), trimmed
to the fields joinops or its tests can meaningfully use. Blocks are kept exactly as sent (real
Slack adds a `block_id` to blocks without one, and a rich_text block to text-only messages).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

Json = dict[str, Any]


class SlackError(Exception):
    """An API-level refusal: answered as HTTP 200 `{"ok": false, "error": code}`."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@dataclass(frozen=True)
class Upload:
    """A file uploaded through files.getUploadURLExternal / POST / files.completeUploadExternal.

    content is None until the bytes were POSTed; channel_id, initial_comment, thread_ts and
    message_ts (the message that shared the file) are set once the upload is completed. A file
    deleted with files.delete keeps its record, `deleted`, with its content gone.
    """

    file_id: str
    filename: str
    length: int
    content: bytes | None = None
    title: str | None = None
    completed: bool = False
    channel_id: str | None = None
    initial_comment: str | None = None
    thread_ts: str | None = None
    message_ts: str | None = None
    deleted: bool = False


@dataclass(frozen=True)
class ResponseTarget:
    """What a response_url stands for; unknown parts mean "not simulated"."""

    channel: str | None = None
    user: str | None = None
    message_ts: str | None = None
    thread_ts: str | None = None


class Workspace:
    """State of one fake workspace, changed only through the Web API methods."""

    def __init__(
        self,
        *,
        url: str,
        team_id: str = "T0SIM00001",
        team_domain: str = "joinops-sim",
        team_name: str = "joinops sim",
        bot_user_id: str = "U0BOT00001",
        bot_name: str = "joinops",
        bot_id: str = "B0BOT00001",
        app_id: str = "A0APP00001",
        ts_base: int = 1_733_150_000,
    ) -> None:
        self.url = url
        self.team_id = team_id
        self.team_domain = team_domain
        self.team_name = team_name
        self.bot_user_id = bot_user_id
        self.bot_name = bot_name
        self.bot_id = bot_id
        self.app_id = app_id
        self.ts_base = ts_base
        self.users: dict[str, Json] = {}
        self.usergroups: dict[str, list[str]] = {}
        self.reset()

    def reset(self) -> None:
        """Forget every message, upload, view and response (configuration stays)."""
        self._tick = 0
        self.seq = 0  # ids handed out so far (`next_id`)
        self.channels: dict[str, dict[str, Json]] = {}  # channel -> ts -> message (all levels)
        self.ephemerals: dict[str, list[Json]] = {}
        self.dms: dict[tuple[str, ...], str] = {}
        self.uploads: dict[str, Upload] = {}
        self.views: list[Json] = []
        self.responses: dict[str, list[Json]] = {}
        self.response_targets: dict[str, ResponseTarget] = {}
        self.socket_tickets: set[str] = set()  # unused apps.connections.open URLs
        self.notified: list[tuple[str, str | None]] = []  # (channel, thread_ts) of new messages

    # ---- ids -------------------------------------------------------------------------------

    def next_ts(self) -> str:
        """Message timestamps: unique, increasing, Slack-shaped ("1733150000.000100")."""
        self._tick += 100
        seconds, micros = divmod(self._tick, 1_000_000)
        return f"{self.ts_base + seconds}.{micros:06d}"

    def next_id(self, prefix: str) -> str:
        self.seq += 1
        return f"{prefix}0SIM{self.seq:06d}"

    # ---- queries used by SlackSim ----------------------------------------------------------

    def top_level(self, channel: str) -> dict[str, Json]:
        return {
            ts: copy.deepcopy(m)
            for ts, m in self.channels.get(channel, {}).items()
            if m.get("thread_ts", ts) == ts
        }

    def notifications(self, channel: str, thread_ts: str | None = None) -> int:
        """New messages in `channel` (only those in the thread `thread_ts`, when given)."""
        return sum(
            1
            for where, thread in self.notified
            if where == channel and (thread_ts is None or thread == thread_ts)
        )

    def replies(self, channel: str, thread_ts: str) -> list[Json]:
        return [
            copy.deepcopy(m)
            for ts, m in self.channels.get(channel, {}).items()
            if ts != thread_ts and m.get("thread_ts") == thread_ts
        ]

    # ---- primitives of the Web API methods ----------------------------------------------------

    def message(self, channel: str, ts: str) -> Json:
        message = self.channels.get(channel, {}).get(ts)
        if message is None:
            raise SlackError("message_not_found")
        return message

    def bot_message(self, ts: str, params: Json) -> Json:
        message: Json = {"type": "message", "user": self.bot_user_id, "bot_id": self.bot_id}
        message.update({"app_id": self.app_id, "text": params.get("text") or "", "ts": ts})
        message["team"] = self.team_id
        for key in ("blocks", "attachments", "metadata"):
            if params.get(key) is not None:
                message[key] = params[key]
        return message

    def store(self, channel: str, message: Json, thread_ts: str | None) -> None:
        """Keep a new message: a channel post, or a reply in the thread `thread_ts`. Each one
        notifies (`notified`); an edit changes a stored message in place and notifies nobody."""
        ts = message["ts"]
        self.notified.append((channel, thread_ts or None))
        if thread_ts:
            message["thread_ts"] = thread_ts
            parent = self.channels.get(channel, {}).get(thread_ts)
            if parent is not None:
                message["parent_user_id"] = parent.get("user")
                parent["thread_ts"] = thread_ts
                parent["reply_count"] = parent.get("reply_count", 0) + 1
                users = parent.setdefault("reply_users", [])
                if message["user"] not in users:
                    users.append(message["user"])
                parent["reply_users_count"] = len(users)
                parent["latest_reply"] = ts
        self.channels.setdefault(channel, {})[ts] = message

    def permalink(self, channel: str, ts: str, thread_ts: str | None) -> str:
        link = f"https://{self.team_domain}.slack.com/archives/{channel}/p{ts.replace('.', '')}"
        if thread_ts and thread_ts != ts:
            link += f"?thread_ts={thread_ts}&cid={channel}"
        return link

    def user(self, user_id: str) -> Json:
        """users.info's `user` object: a plausible synthesised user, overlaid by `users[id]`."""
        name = "joinops" if user_id == self.bot_user_id else user_id.lower()
        profile = {
            "real_name": f"User {user_id}",
            "display_name": name,
            "real_name_normalized": f"User {user_id}",
            "display_name_normalized": name,
            "email": f"{name}@example.com",
            "team": self.team_id,
        }
        user: Json = {
            "id": user_id,
            "team_id": self.team_id,
            "name": name,
            "deleted": False,
            "real_name": profile["real_name"],
            "tz": "UTC",
            "tz_label": "Coordinated Universal Time",
            "tz_offset": 0,
            "profile": profile,
            "is_admin": False,
            "is_owner": False,
            "is_primary_owner": False,
            "is_restricted": False,
            "is_ultra_restricted": False,
            "is_bot": user_id == self.bot_user_id,
            "is_app_user": False,
            "updated": self.ts_base,
        }
        user.update(copy.deepcopy(self.users.get(user_id, {})))
        return user
