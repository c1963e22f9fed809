"""Cross-cutting concerns, one small middleware each, run after bolt's own (which verifies the
signature and timestamp first: a bad or stale request never reaches these)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

from slack_bolt.context import BoltContext
from slack_bolt.request import BoltRequest
from slack_bolt.response import BoltResponse

from bot import payloads, slack_limits
from bot.render import blocks as render_blocks

log = logging.getLogger(__name__)


def drop_slack_retries(
    request: BoltRequest, next: Callable[[], BoltResponse]
) -> BoltResponse | None:
    """Slack redelivers when an answer was slow (`X-Slack-Retry-Num`); the first delivery is
    already being handled, so a redelivery is acknowledged and dropped: never a second request.
    """
    attempt = _retry_attempt(request)
    if attempt > 0:  # Socket Mode sends `0` with a first delivery
        reason = (request.headers.get("x-slack-retry-reason") or ["?"])[0]
        log.info("dropped Slack redelivery #%s (%s)", attempt, reason)
        return BoltResponse(status=200, body="", headers={"x-slack-no-retry": "1"})
    return next()


def _retry_attempt(request: BoltRequest) -> int:
    values = request.headers.get("x-slack-retry-num") or []
    try:
        return int(values[0]) if values else 0
    except ValueError:
        return 1  # a redelivery whose number does not parse is still a redelivery


def answer_in_thread(
    body: dict[str, Any], context: BoltContext, next: Callable[[], BoltResponse]
) -> BoltResponse | None:
    """A click on a message inside a thread is answered in that thread, not at the channel's
    root: every `respond` of the click gets the thread's ts unless it names one itself."""
    respond = context.get("respond")
    thread = payloads.clicked_in_thread(body)
    if respond is not None and thread:

        def in_thread(*args: Any, **kwargs: Any) -> Any:
            kwargs.setdefault("thread_ts", thread)
            return respond(*args, **kwargs)

        context["respond"] = in_thread
    return next()


def keep_to_limits(context: BoltContext, next: Callable[[], BoltResponse]) -> BoltResponse | None:
    """Every `respond` of a command or a click within Slack's limits, as the Web API calls are
    (`slack_limits.outgoing`): a `text` too long is cut; blocks Slack would refuse are not sent
    — logged, and `OverLimits` raised to the caller as Slack's refusal would be."""
    respond = context.get("respond")
    if respond is not None:

        def within(text: Any = "", blocks: Any = None, **kwargs: Any) -> Any:
            message = text if isinstance(text, dict) else {"text": text, "blocks": blocks}
            try:
                checked = slack_limits.outgoing(message)
            except slack_limits.OverLimits as e:
                log.error("not sent: an answer to a response_url breaks Slack's limits: %s", e)
                raise
            if isinstance(text, dict):
                return respond(checked, **kwargs)
            return respond(text=checked["text"], blocks=blocks, **kwargs)

        context["respond"] = within
    return next()


def refuse_malformed(body: dict[str, Any], next: Callable[[], BoltResponse]) -> BoltResponse | None:
    """A signed but malformed payload gets a 400 with the reason, never a traceback."""
    problem = payloads.problem(body)
    if problem is not None:
        log.warning("refused a malformed request: %s", problem)
        return BoltResponse(status=400, body=problem)
    return next()


# ---- for middleware that answers instead of passing a request on ------------------------------


def ephemeral_ack(text: str) -> BoltResponse:
    """The ack of a slash command, carrying an answer only the person who typed it sees."""
    body = {
        "response_type": "ephemeral",
        "text": text,
        "blocks": [block.to_dict() for block in render_blocks.reply(text)],
    }
    return BoltResponse(status=200, body=body)


def answer_click_later(executor: Executor, respond: Any, text: str) -> BoltResponse:
    """Ack a click now; its answer (only the clicker sees it) goes through its response_url
    from `executor`, so no outbound call stands between Slack and the ack."""
    executor.submit(tell, respond, text)
    return BoltResponse(status=200, body="")


def tell(respond: Any, text: str) -> None:
    """An answer only the person who clicked or typed sees, through the response_url."""
    try:
        respond(text=text, response_type="ephemeral", replace_original=False)
    except Exception as e:  # a courtesy: what was refused stays refused
        log.warning("could not answer a refused click: %s", e)
