"""The file upload flow: files.getUploadURLExternal, the POST of the bytes to the upload URL,
files.completeUploadExternal (which shares the file in a message when given a channel); and
files.delete, which leaves a tombstone where the file was shared, as Slack does."""

from __future__ import annotations

import copy
from dataclasses import replace

from slacksim.params import id_list
from slacksim.workspace import Json, SlackError, Upload, Workspace


def files_get_upload_url_external(ws: Workspace, params: Json) -> Json:
    filename = params.get("filename")
    try:
        length = int(params.get("length", ""))
    except ValueError:
        raise SlackError("invalid_arguments") from None
    if not filename or length < 1:
        raise SlackError("invalid_arguments")
    file_id = ws.next_id("F")
    ws.uploads[file_id] = Upload(file_id=file_id, filename=filename, length=length)
    return {"ok": True, "upload_url": f"{ws.url}/upload/{file_id}", "file_id": file_id}


def receive_upload(ws: Workspace, file_id: str, content: bytes) -> bool:
    """The POST to an upload_url; False when no such upload is pending."""
    upload = ws.uploads.get(file_id)
    if upload is None or upload.completed:
        return False
    ws.uploads[file_id] = replace(upload, content=content)
    return True


def files_complete_upload_external(ws: Workspace, params: Json) -> Json:
    files = params.get("files")
    if not isinstance(files, list) or not files:
        raise SlackError("invalid_arguments")
    ids = [f.get("id") for f in files if isinstance(f, dict)]
    pending = [ws.uploads.get(i) for i in ids if isinstance(i, str)]
    if len(pending) != len(files) or any(u is None or u.content is None for u in pending):
        raise SlackError("file_not_found")
    channels = id_list(params.get("channel_id")) or id_list(params.get("channels"))
    channel = channels[0] if channels else None
    thread_ts = params.get("thread_ts") or None
    comment = params.get("initial_comment") or None
    objects = []
    for spec, upload in zip(files, pending, strict=True):
        assert upload is not None and upload.content is not None
        title = spec.get("title") or upload.filename
        upload = replace(upload, title=title, completed=True, channel_id=channel)
        upload = replace(upload, initial_comment=comment, thread_ts=thread_ts)
        ws.uploads[upload.file_id] = upload
        objects.append(_file_object(ws, upload, channels))
    if channel is not None:
        message = ws.bot_message(ws.next_ts(), {"text": comment or ""})
        share: Json = {"ts": message["ts"], **({"thread_ts": thread_ts} if thread_ts else {})}
        for obj in objects:
            obj["shares"] = {"public" if channel[0] == "C" else "private": {channel: [share]}}
            fid = obj["id"]
            ws.uploads[fid] = replace(ws.uploads[fid], message_ts=message["ts"])
        message.update({"files": copy.deepcopy(objects), "upload": True, "display_as_bot": False})
        ws.store(channel, message, thread_ts)
    return {"ok": True, "files": objects}


def files_delete(ws: Workspace, params: Json) -> Json:
    """Delete an uploaded file: `file_not_found` for an id never completed, `file_deleted`
    for one already deleted. Its bytes are gone; the message that shared it shows a tombstone."""
    file_id = params.get("file")
    if not isinstance(file_id, str) or not file_id:
        raise SlackError("invalid_arguments")
    upload = ws.uploads.get(file_id)
    if upload is None or not upload.completed:
        raise SlackError("file_not_found")
    if upload.deleted:
        raise SlackError("file_deleted")
    ws.uploads[file_id] = replace(upload, deleted=True, content=None)
    if upload.channel_id and upload.message_ts:
        shared = ws.channels.get(upload.channel_id, {}).get(upload.message_ts)
        if shared is not None:
            shared["files"] = [
                {"id": file_id, "mode": "tombstone"} if f.get("id") == file_id else f
                for f in shared.get("files", [])
            ]
    return {"ok": True}


def _file_object(ws: Workspace, upload: Upload, channels: list[str]) -> Json:
    base = f"https://files.slack.com/files-pri/{ws.team_id}-{upload.file_id}"
    size = len(upload.content or b"")
    return {
        "id": upload.file_id,
        "created": ws.ts_base,
        "timestamp": ws.ts_base,
        "name": upload.filename,
        "title": upload.title,
        "mimetype": "text/plain",
        "filetype": "text",
        "pretty_type": "Plain Text",
        "user": ws.bot_user_id,
        "user_team": ws.team_id,
        "size": size,
        "mode": "hosted",
        "is_external": False,
        "is_public": any(c.startswith("C") for c in channels),
        "url_private": f"{base}/{upload.filename}",
        "url_private_download": f"{base}/download/{upload.filename}",
        "permalink": f"https://{ws.team_domain}.slack.com/files/{ws.bot_user_id}/"
        f"{upload.file_id}/{upload.filename}",
        "channels": [c for c in channels if c.startswith("C")],
        "groups": [c for c in channels if c.startswith("G")],
        "ims": [c for c in channels if c.startswith("D")],
        "shares": {},
    }
