"""Words every Slack message shares: the command's name, quoting, times, people, roles.

Messages are Slack mrkdwn; words the user typed are shown with `common.quote`. Every text
from outside the bot (typed by a user, reported by a cluster or a host, said by a worker) goes
through `quote`, `short` or `plain`, which escape Slack's three control characters (`&`, `<`,
`>`): a host reporting `<!channel>` is shown, not pinged. The markup the bot adds itself
(`user`, `mentions`, `at`, `channels`) is built around the escaped text, never inside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from joinops.wording import count_pods

COMMAND = "/join"
ROLES = "worker|control-plane"
REQUEST_ID_EXAMPLE = "req-3f9a1c2b"


def plain(text: str) -> str:
    """A text from outside the bot, shown as it is: `&`, `<` and `>` escaped for mrkdwn, so
    nothing in it becomes a mention, a link or a `<!channel>`."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def quote(word: str, limit: int = 60) -> str:
    """`word` as inline code, backticks removed, cut to `limit` characters and escaped."""
    clean = word.replace("`", "'")
    if len(clean) > limit:
        clean = clean[: limit - 1] + "…"
    return f"`{plain(clean)}`"


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
    """One line of at most `limit` characters (before escaping), escaped (`plain`)."""
    line = " ".join(text.split())
    return plain(line if len(line) <= limit else line[: limit - 1] + "…")


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
