"""Who typed a `/join` command, where, and how to answer them; running the work after the ack."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import redis

from bot.render import blocks as render_blocks
from bot.texts import access as access_texts
from bot.texts import answers as answers_texts
from joinops.errors import NoWorkerAnswered

log = logging.getLogger(__name__)

Respond = Callable[..., Any]


@dataclass(frozen=True)
class Invocation:
    """Who typed the command, where, and how to answer them."""

    user: str
    channel: str
    respond: Respond
    # an access check the ack left unsettled (bot/access.py): its refusal, or None to go on
    settle: Callable[[], str | None] | None = None

    def tell(self, text: str, block_list: list[Any] | None = None) -> None:
        """An ephemeral answer to the user who typed the command."""
        try:
            self.respond(
                text=text, blocks=block_list or render_blocks.reply(text), response_type="ephemeral"
            )
        except Exception as e:  # the answer is a courtesy; what was done stands
            log.warning("could not answer %s: %s", self.user, e)


def run_logged(work: Callable[..., object], inv: Invocation, command: object) -> None:
    """Run a route's work once the user may ask for it; a bug goes to the log with its
    traceback, a plain line to the user."""
    try:
        refusal = inv.settle() if inv.settle is not None else None
        if refusal is not None:
            inv.tell(refusal)
            return
        work(inv, command)
    except redis.RedisError as e:  # an outage, not a bug: no traceback, and said as such
        log.warning("/join: the state store stopped answering: %s", e)
        inv.tell(access_texts.store_lost_midway())
    except NoWorkerAnswered as e:  # no worker running, or every one busy: said as such
        log.warning("/join: %s", e)
        inv.tell(answers_texts.no_worker_answered(e.seconds))
    except Exception:
        log.exception("/join: the work after the ack failed")
        inv.tell(answers_texts.internal_error())


def ack_with(ack: Callable[..., None], text: str | None) -> None:
    """Acknowledge, with an immediate answer only the user sees when there is one."""
    if text:
        ack(text=text, blocks=_ack_blocks(text), response_type="ephemeral")
    else:
        ack()


@functools.lru_cache(maxsize=256)
def _ack_blocks(text: str) -> tuple[dict[str, Any], ...]:
    """An ack's blocks as the JSON they become, built once a text: most acks repeat one (help,
    a typo's answer, "Checking `node` …"), and building and validating the Block Kit objects
    cost `/join help` a sixth of its CPU. Read-only: bolt serialises them as they are."""
    return tuple(block.to_dict() for block in render_blocks.reply(text))
