"""conversations.replies: a thread read back, its parent first, then its replies oldest first;
conversations.history: a channel's messages (thread replies aside), newest first.

As Slack answers it (https://docs.slack.dev/reference/methods/conversations.replies): `ts` is the
thread's parent; `oldest` and `latest` bound the replies by timestamp (exclusive unless
`inclusive`); `limit` messages a page (at most 1000), the next page through
`response_metadata.next_cursor`. The first page begins with the parent message whatever the
bounds; later pages hold replies only. An unknown channel is `channel_not_found`, a `ts` that is
no message of it `thread_not_found`.

conversations.history (https://docs.slack.dev/reference/methods/conversations.history) answers
the channel's own messages — a thread's parent, not its replies — newest first, bounded by
`oldest`/`latest` the same way, `limit` a page (default 100, at most 999) and a cursor.
"""

from __future__ import annotations

import copy

from slacksim.params import required
from slacksim.workspace import Json, SlackError, Workspace

MAX_LIMIT = 1000
DEFAULT_LIMIT = 1000
HISTORY_LIMIT, HISTORY_MAX = 100, 999


def conversations_replies(ws: Workspace, params: Json) -> Json:
    channel = required(params, "channel", "channel_not_found")
    thread_ts = required(params, "ts", "thread_not_found")
    if channel not in ws.channels:
        raise SlackError("channel_not_found")
    parent = ws.channels[channel].get(thread_ts)
    if parent is None:
        raise SlackError("thread_not_found")
    start = _cursor(params.get("cursor"))
    limit = _limit(params.get("limit"))
    replies = [m for m in ws.replies(channel, thread_ts) if _within(m["ts"], params)]
    page = replies[start : start + limit]
    messages = ([copy.deepcopy(parent)] if start == 0 else []) + page
    more = start + limit < len(replies)
    answer: Json = {"ok": True, "messages": messages, "has_more": more}
    answer["response_metadata"] = {"next_cursor": f"next:{start + limit}" if more else ""}
    return answer


def conversations_history(ws: Workspace, params: Json) -> Json:
    channel = required(params, "channel", "channel_not_found")
    if channel not in ws.channels:
        raise SlackError("channel_not_found")
    start = _cursor(params.get("cursor"))
    limit = min(_limit(params.get("limit") or HISTORY_LIMIT), HISTORY_MAX)
    roots = ws.top_level(channel)
    newest_first = sorted((ts for ts in roots if _within(ts, params)), key=_key, reverse=True)
    page = [roots[ts] for ts in newest_first[start : start + limit]]
    more = start + limit < len(newest_first)
    answer: Json = {"ok": True, "messages": page, "has_more": more}
    answer["response_metadata"] = {"next_cursor": f"next:{start + limit}" if more else ""}
    return answer


def _within(ts: str, params: Json) -> bool:
    inclusive = str(params.get("inclusive") or "").lower() in ("1", "true")
    oldest, latest = params.get("oldest"), params.get("latest")
    if oldest and (_key(ts) < _key(oldest) or (_key(ts) == _key(oldest) and not inclusive)):
        return False
    return not (
        latest and (_key(ts) > _key(latest) or (_key(ts) == _key(latest) and not inclusive))
    )


def _key(ts: object) -> tuple[int, int]:
    """A message timestamp as a number that compares exactly ("1733150000.000100")."""
    seconds, _, micros = str(ts).partition(".")
    try:
        return int(seconds), int((micros + "000000")[:6])
    except ValueError as e:
        raise SlackError("invalid_ts_oldest") from e


def _cursor(value: object) -> int:
    if not value:
        return 0
    text = str(value)
    if not text.startswith("next:") or not text[5:].isdigit():
        raise SlackError("invalid_cursor")
    return int(text[5:])


def _limit(value: object) -> int:
    try:
        limit = int(str(value)) if value not in (None, "") else DEFAULT_LIMIT
    except ValueError as e:
        raise SlackError("invalid_limit") from e
    return max(1, min(limit, MAX_LIMIT))
