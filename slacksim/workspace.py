"""The simulated workspace: its state and the Web API methods that read and change it.

Plain Python, no HTTP and no locking: `SlackSim` serialises every call into it. Answers follow
the shapes of Slack's documented responses (https://docs.slack.dev/reference/methods), trimmed
to the fields joinops or its tests can meaningfully use. Blocks are kept exactly as sent (real
Slack adds a `block_id` to blocks without one, and a rich_text block to text-only messages).
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

Json = dict[str, Any]

MAX_TEXT = 40_000  # chat.postMessage truncates/refuses beyond this many characters
MAX_BLOCKS = 50  # blocks per message
RESPONSE_URL_USES = 5  # Slack: a response_url works up to 5 times (within 30 minutes)
_USER_ID = re.compile(r"^[UW][A-Z0-9]+$")


class SlackError(Exception):
    """An API-level refusal: answered as HTTP 200 `{"ok": false, "error": code}`."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@dataclass(frozen=True)
class Upload:
    """A file uploaded through files.getUploadURLExternal / POST / files.completeUploadExternal.

    content is None until the bytes were POSTed; channel_id, initial_comment, thread_ts and
    message_ts (the message that shared the file) are set once the upload is completed.
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


@dataclass(frozen=True)
class ResponseTarget:
    """What a response_url stands for; unknown parts mean "not simulated"."""

    channel: str | None = None
    user: str | None = None
    message_ts: str | None = None
    thread_ts: str | None = None


class Workspace:
    """State of one fake workspace, changed only through the Web API methods below."""

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
        self._seq = 0
        self.channels: dict[str, dict[str, Json]] = {}  # channel -> ts -> message (all levels)
        self.ephemerals: dict[str, list[Json]] = {}
        self.dms: dict[tuple[str, ...], str] = {}
        self.uploads: dict[str, Upload] = {}
        self.views: list[Json] = []
        self.responses: dict[str, list[Json]] = {}
        self.response_targets: dict[str, ResponseTarget] = {}

    # ---- ids -------------------------------------------------------------------------------

    def next_ts(self) -> str:
        """Message timestamps: unique, increasing, Slack-shaped ("1733150000.000100")."""
        self._tick += 100
        seconds, micros = divmod(self._tick, 1_000_000)
        return f"{self.ts_base + seconds}.{micros:06d}"

    def next_id(self, prefix: str) -> str:
        self._seq += 1
        return f"{prefix}0SIM{self._seq:06d}"

    # ---- queries used by SlackSim ----------------------------------------------------------

    def top_level(self, channel: str) -> dict[str, Json]:
        return {
            ts: copy.deepcopy(m)
            for ts, m in self.channels.get(channel, {}).items()
            if m.get("thread_ts", ts) == ts
        }

    def replies(self, channel: str, thread_ts: str) -> list[Json]:
        return [
            copy.deepcopy(m)
            for ts, m in self.channels.get(channel, {}).items()
            if ts != thread_ts and m.get("thread_ts") == thread_ts
        ]

    # ---- helpers ---------------------------------------------------------------------------

    def _message(self, channel: str, ts: str) -> Json:
        message = self.channels.get(channel, {}).get(ts)
        if message is None:
            raise SlackError("message_not_found")
        return message

    def _bot_message(self, ts: str, params: Json) -> Json:
        message: Json = {"type": "message", "user": self.bot_user_id, "bot_id": self.bot_id}
        message.update({"app_id": self.app_id, "text": params.get("text") or "", "ts": ts})
        message["team"] = self.team_id
        for key in ("blocks", "attachments", "metadata"):
            if params.get(key) is not None:
                message[key] = params[key]
        return message

    def _store(self, channel: str, message: Json, thread_ts: str | None) -> None:
        ts = message["ts"]
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

    def _permalink(self, channel: str, ts: str, thread_ts: str | None) -> str:
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

    # ---- Web API methods -------------------------------------------------------------------

    def auth_test(self, params: Json) -> Json:
        return {
            "ok": True,
            "url": f"https://{self.team_domain}.slack.com/",
            "team": self.team_name,
            "user": self.bot_name,
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def chat_post_message(self, params: Json) -> Json:
        channel = _required(params, "channel", "channel_not_found")
        _check_content(params)
        thread_ts = params.get("thread_ts") or None
        message = self._bot_message(self.next_ts(), params)
        self._store(channel, message, thread_ts)
        return {"ok": True, "channel": channel, "ts": message["ts"], "message": _copy(message)}

    def chat_update(self, params: Json) -> Json:
        channel = _required(params, "channel", "channel_not_found")
        ts = _required(params, "ts", "message_not_found")
        message = self._message(channel, ts)
        if not any(params.get(k) is not None for k in ("text", "blocks", "attachments")):
            raise SlackError("no_text")
        _check_content(params)
        if params.get("text") is not None:
            message["text"] = params["text"]
        for key in ("blocks", "attachments", "metadata"):  # omitted: kept; []: removed
            if params.get(key) == []:
                message.pop(key, None)
            elif params.get(key) is not None:
                message[key] = params[key]
        message["edited"] = {"user": self.bot_user_id, "ts": self.next_ts()}
        return {
            "ok": True,
            "channel": channel,
            "ts": ts,
            "text": message["text"],
            "message": _copy(message),
        }

    def chat_post_ephemeral(self, params: Json) -> Json:
        channel = _required(params, "channel", "channel_not_found")
        user = _required(params, "user", "user_not_found")
        _check_content(params)
        ts = self.next_ts()
        ephemeral = self._bot_message(ts, params)
        ephemeral.update({"channel": channel, "via": "chat.postEphemeral"})
        if params.get("thread_ts"):
            ephemeral["thread_ts"] = params["thread_ts"]
        self.ephemerals.setdefault(user, []).append(ephemeral)
        return {"ok": True, "message_ts": ts}

    def chat_get_permalink(self, params: Json) -> Json:
        channel = _required(params, "channel", "channel_not_found")
        ts = _required(params, "message_ts", "message_not_found")
        message = self._message(channel, ts)
        link = self._permalink(channel, ts, message.get("thread_ts"))
        return {"ok": True, "channel": channel, "permalink": link}

    def conversations_open(self, params: Json) -> Json:
        if params.get("channel"):
            return {"ok": True, "channel": {"id": params["channel"]}}
        users = _id_list(params.get("users"))
        if not users:
            raise SlackError("users_list_not_supplied")
        if len(users) > 8:
            raise SlackError("too_many_users")
        key = tuple(sorted(set(users)))
        answer: Json = {"ok": True}
        if key in self.dms:
            answer.update({"no_op": True, "already_open": True})
        else:
            self.dms[key] = self.next_id("D" if len(key) == 1 else "G")
        answer["channel"] = {"id": self.dms[key]}
        return answer

    def users_info(self, params: Json) -> Json:
        user_id = str(params.get("user") or "")
        if not _USER_ID.match(user_id):
            raise SlackError("user_not_found")
        return {"ok": True, "user": self.user(user_id)}

    def usergroups_users_list(self, params: Json) -> Json:
        group = params.get("usergroup")
        if not group or group not in self.usergroups:
            raise SlackError("no_such_subteam")
        return {"ok": True, "users": list(self.usergroups[group])}

    def files_get_upload_url_external(self, params: Json) -> Json:
        filename = params.get("filename")
        try:
            length = int(params.get("length", ""))
        except ValueError:
            raise SlackError("invalid_arguments") from None
        if not filename or length < 1:
            raise SlackError("invalid_arguments")
        file_id = self.next_id("F")
        self.uploads[file_id] = Upload(file_id=file_id, filename=filename, length=length)
        return {"ok": True, "upload_url": f"{self.url}/upload/{file_id}", "file_id": file_id}

    def receive_upload(self, file_id: str, content: bytes) -> bool:
        """The POST to an upload_url; False when no such upload is pending."""
        upload = self.uploads.get(file_id)
        if upload is None or upload.completed:
            return False
        self.uploads[file_id] = replace(upload, content=content)
        return True

    def files_complete_upload_external(self, params: Json) -> Json:
        files = params.get("files")
        if not isinstance(files, list) or not files:
            raise SlackError("invalid_arguments")
        ids = [f.get("id") for f in files if isinstance(f, dict)]
        pending = [self.uploads.get(i) for i in ids if isinstance(i, str)]
        if len(pending) != len(files) or any(u is None or u.content is None for u in pending):
            raise SlackError("file_not_found")
        channels = _id_list(params.get("channel_id")) or _id_list(params.get("channels"))
        channel = channels[0] if channels else None
        thread_ts = params.get("thread_ts") or None
        comment = params.get("initial_comment") or None
        objects = []
        for spec, upload in zip(files, pending, strict=True):
            assert upload is not None and upload.content is not None
            title = spec.get("title") or upload.filename
            upload = replace(upload, title=title, completed=True, channel_id=channel)
            upload = replace(upload, initial_comment=comment, thread_ts=thread_ts)
            self.uploads[upload.file_id] = upload
            objects.append(self._file_object(upload, channels))
        if channel is not None:
            message = self._bot_message(self.next_ts(), {"text": comment or ""})
            share: Json = {"ts": message["ts"], **({"thread_ts": thread_ts} if thread_ts else {})}
            for obj in objects:
                obj["shares"] = {"public" if channel[0] == "C" else "private": {channel: [share]}}
                fid = obj["id"]
                self.uploads[fid] = replace(self.uploads[fid], message_ts=message["ts"])
            message.update({"files": _copy(objects), "upload": True, "display_as_bot": False})
            self._store(channel, message, thread_ts)
        return {"ok": True, "files": objects}

    def _file_object(self, upload: Upload, channels: list[str]) -> Json:
        base = f"https://files.slack.com/files-pri/{self.team_id}-{upload.file_id}"
        size = len(upload.content or b"")
        return {
            "id": upload.file_id,
            "created": self.ts_base,
            "timestamp": self.ts_base,
            "name": upload.filename,
            "title": upload.title,
            "mimetype": "text/plain",
            "filetype": "text",
            "pretty_type": "Plain Text",
            "user": self.bot_user_id,
            "user_team": self.team_id,
            "size": size,
            "mode": "hosted",
            "is_external": False,
            "is_public": any(c.startswith("C") for c in channels),
            "url_private": f"{base}/{upload.filename}",
            "url_private_download": f"{base}/download/{upload.filename}",
            "permalink": f"https://{self.team_domain}.slack.com/files/{self.bot_user_id}/"
            f"{upload.file_id}/{upload.filename}",
            "channels": [c for c in channels if c.startswith("C")],
            "groups": [c for c in channels if c.startswith("G")],
            "ims": [c for c in channels if c.startswith("D")],
            "shares": {},
        }

    def views_open(self, params: Json) -> Json:
        view = params.get("view")
        if not params.get("trigger_id") or not isinstance(view, dict):
            raise SlackError("invalid_arguments")
        view_id = self.next_id("V")
        opened: Json = {
            "id": view_id,
            "team_id": self.team_id,
            "type": view.get("type", "modal"),
            "title": view.get("title"),
            "close": view.get("close"),
            "submit": view.get("submit"),
            "blocks": view.get("blocks", []),
            "private_metadata": view.get("private_metadata", ""),
            "callback_id": view.get("callback_id", ""),
            "state": {"values": {}},
            "hash": f"{self.ts_base}.{self._seq:08x}",
            "clear_on_close": bool(view.get("clear_on_close", False)),
            "notify_on_close": bool(view.get("notify_on_close", False)),
            "root_view_id": view_id,
            "previous_view_id": None,
            "app_id": self.app_id,
            "external_id": view.get("external_id", ""),
            "bot_id": self.bot_id,
            "trigger_id": params["trigger_id"],
        }
        self.views.append(opened)
        return {"ok": True, "view": _copy(opened)}

    def reactions_add(self, params: Json) -> Json:
        channel = _required(params, "channel", "channel_not_found")
        ts = _required(params, "timestamp", "message_not_found")
        name = str(params.get("name") or "")
        if not name or ":" in name or " " in name:
            raise SlackError("invalid_name")
        message = self._message(channel, ts)
        reactions: list[Json] = message.setdefault("reactions", [])
        reaction = next((r for r in reactions if r["name"] == name), None)
        if reaction is None:
            reaction = {"name": name, "users": [], "count": 0}
            reactions.append(reaction)
        if self.bot_user_id in reaction["users"]:
            raise SlackError("already_reacted")
        reaction["users"].append(self.bot_user_id)
        reaction["count"] += 1
        return {"ok": True}

    # ---- response_url ----------------------------------------------------------------------

    def respond(self, response_id: str, body: Json) -> tuple[int, str]:
        """A POST to a response_url: (HTTP status, body text) as Slack answers it."""
        used = self.responses.setdefault(response_id, [])
        if len(used) >= RESPONSE_URL_USES:
            return 404, "used_url"
        deleting = bool(body.get("delete_original"))
        if not deleting and not body.get("text") and not body.get("blocks"):
            return 400, "no_text"
        used.append(body)
        self._apply_response(self.response_targets.get(response_id, ResponseTarget()), body)
        return 200, "ok"

    def _apply_response(self, target: ResponseTarget, body: Json) -> None:
        original = None
        if target.channel and target.message_ts:
            original = self.channels.get(target.channel, {}).get(target.message_ts)
        if body.get("delete_original") and original is not None:
            del self.channels[target.channel or ""][target.message_ts or ""]
        elif body.get("replace_original") and original is not None:
            original["text"] = body.get("text") or ""
            for key in ("blocks", "attachments"):
                if body.get(key) is not None:
                    original[key] = body[key]
                else:
                    original.pop(key, None)
        elif body.get("response_type") == "in_channel" and target.channel:
            message = self._bot_message(self.next_ts(), body)
            self._store(target.channel, message, body.get("thread_ts") or target.thread_ts)
        elif body.get("response_type", "ephemeral") == "ephemeral" and target.user:
            ephemeral = self._bot_message(self.next_ts(), body)
            ephemeral.update({"channel": target.channel, "via": "response_url"})
            self.ephemerals.setdefault(target.user, []).append(ephemeral)


Method = Callable[[Workspace, Json], Json]

METHODS: dict[str, Method] = {
    "auth.test": Workspace.auth_test,
    "chat.postMessage": Workspace.chat_post_message,
    "chat.update": Workspace.chat_update,
    "chat.postEphemeral": Workspace.chat_post_ephemeral,
    "chat.getPermalink": Workspace.chat_get_permalink,
    "conversations.open": Workspace.conversations_open,
    "users.info": Workspace.users_info,
    "usergroups.users.list": Workspace.usergroups_users_list,
    "files.getUploadURLExternal": Workspace.files_get_upload_url_external,
    "files.completeUploadExternal": Workspace.files_complete_upload_external,
    "views.open": Workspace.views_open,
    "reactions.add": Workspace.reactions_add,
}

# Parameters Slack accepts as JSON text inside form-encoded bodies; decoded on receipt.
JSON_PARAMS = frozenset({"blocks", "attachments", "files", "view", "metadata"})


def decode_params(params: Json) -> Json:
    """Decode the JSON-text parameters (`blocks=[...]` in a form body) into Python values."""
    decoded = dict(params)
    for key in JSON_PARAMS & decoded.keys():
        value = decoded[key]
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                decoded[key] = json.loads(value)
    return decoded


def _required(params: Json, key: str, error: str) -> str:
    value = params.get(key)
    if not value or not isinstance(value, str):
        raise SlackError(error)
    return value


def _check_content(params: Json) -> None:
    text, blocks = params.get("text"), params.get("blocks")
    if not text and not blocks and not params.get("attachments"):
        raise SlackError("no_text")
    if isinstance(text, str) and len(text) > MAX_TEXT:
        raise SlackError("msg_too_long")
    if blocks is not None and not isinstance(blocks, list):
        raise SlackError("invalid_blocks_format")
    if blocks is not None and len(blocks) > MAX_BLOCKS:
        raise SlackError("invalid_blocks")


def _id_list(value: object) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value if v]
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return []


def _copy(value: Any) -> Any:
    return copy.deepcopy(value)
