"""Words every Slack message shares: the command's name, quoting, times, people, roles.

Messages are Slack mrkdwn; words the user typed are shown with `common.quote`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from joinops.wording import count_pods

COMMAND = "/join"
ROLES = "worker|control-plane"
REQUEST_ID_EXAMPLE = "req-3f9a1c2b"


def quote(word: str, limit: int = 60) -> str:
    """`word` as inline code, backticks removed and cut to `limit` characters."""
    clean = word.replace("`", "'")
    if len(clean) > limit:
        clean = clean[: limit - 1] + "…"
    return f"`{clean}`"


def at(timestamp: float) -> str:
    """A time each reader sees in their own time zone (UTC HH:MM where Slack cannot); with its
    date (`on`) when it is not today in UTC — a 3-day loan is not "until 14:00"."""
    when = datetime.fromtimestamp(timestamp, UTC)
    if when.date() != datetime.now(UTC).date():
        return on(timestamp)
    return f"<!date^{int(timestamp)}^{{time}}|{when.strftime('%H:%M')} UTC>"


def user(user_id: str) -> str:
    """A mention of a Slack user; CLI requesters (`cli:name`) are shown as they are."""
    return f"<@{user_id}>" if user_id and not user_id.startswith("cli:") else f"`{user_id or '?'}`"


SEVERITY_MARKS = {"REFUSAL": ":no_entry:", "WARNING": ":warning:", "NOTE": ":information_source:"}
SEVERITY_WORDS = {"REFUSAL": "Refused", "WARNING": "Warning", "NOTE": "Note"}
FORCED_FIELD = "`force`: the drain deletes pods no controller will recreate"


def pods_for_good(count: int) -> str:
    return f"{count_pods(count)} no controller will recreate"


def short(text: str, limit: int = 280) -> str:
    """One line of at most `limit` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def mentions(ids: Sequence[str]) -> str:
    """People and user groups, as Slack shows them: `<@U…>`, `<!subteam^S…>`."""
    shown = [f"<!subteam^{i}>" if i.startswith("S") else user(i) for i in ids]
    return ", ".join(shown) if shown else "whoever runs joinops"


def approvers_asked(approvers: Sequence[str]) -> str:
    """The end of a waiting request's notification: mentioning the approvers notifies them."""
    return f" Approvers: {mentions(approvers)}." if approvers else ""


def channels(ids: Sequence[str]) -> str:
    return ", ".join(f"<#{i}>" for i in ids)


ROLE_WORDS = {"worker": "worker", "control-plane": "control plane"}


def on(timestamp: float) -> str:
    """A date and time each reader sees in their own time zone (UTC where Slack cannot)."""
    utc = datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M")
    return f"<!date^{int(timestamp)}^{{date_short_pretty}} {{time}}|{utc} UTC>"


def role_word(role: str) -> str:
    return ROLE_WORDS.get(role, role)


def node_count(count: int) -> str:
    return f"{count} node" if count == 1 else f"{count} nodes"
