"""What a person reads about the work after their command's ack, when a bot replica stopped in
the middle of it (bot/post_ack_runner.py)."""

from __future__ import annotations

from bot.texts.common import COMMAND, quote


def interrupted(text: str) -> str:
    return (
        f"The bot was restarted while it worked on your {quote(f'{COMMAND} {text}')}, so I cannot "
        "tell whether it finished. If no request message for it appeared in the channel, send "
        "it again."
    )
