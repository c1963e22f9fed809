"""Cross-cutting concerns, one small middleware each, run after bolt's own (which verifies the
signature and timestamp first: a bad or stale request never reaches these).

A malformed payload never reaches them: both transports refuse it before bolt sees it
(bot/http.py with a 400, bot/socket_mode.py with an ack and a log line), since bolt's own
middleware would trip over some (an empty `actions`)."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

from slack_bolt.context import BoltContext
from slack_bolt.middleware import Middleware
from slack_bolt.request import BoltRequest
from slack_bolt.response import BoltResponse

from bot import payloads, slack_limits
from bot.render import blocks as render_blocks

log = logging.getLogger(__name__)

Next = Callable[[], BoltResponse]
_ARGUMENTS: dict[str, Callable[[BoltRequest, Next], Any]] = {
    "body": lambda req, next: req.body,
    "context": lambda req, next: req.context,
    "respond": lambda req, next: req.context.respond,
    "request": lambda req, next: req,
    "next": lambda req, next: next,
}


class Direct(Middleware):
    """A middleware function of the bot's, given the arguments it names (those of
    `_ARGUMENTS`), looked up once. `app.use(function)` would wrap it in bolt's
    `CustomMiddleware`, which builds every argument bolt knows on each call — a dozen payload
    lookups — only to pass the few the function names: for the bot's six that was a tenth of an
    ack's CPU (docs/benchmarks.md, "The acking process's own share")."""

    def __init__(self, func: Callable[..., BoltResponse | None]) -> None:
        names = list(inspect.signature(func).parameters)
        unknown = [name for name in names if name not in _ARGUMENTS]
        if unknown:
            raise TypeError(f"{func.__qualname__}: no such middleware argument: {unknown}")
        self.func = func
        self._arguments = [(name, _ARGUMENTS[name]) for name in names]

    def process(self, *, req: BoltRequest, resp: BoltResponse, next: Next) -> BoltResponse | None:
        return self.func(**{name: given(req, next) for name, given in self._arguments})

    @property
    def name(self) -> str:
        return f"Direct({self.func.__qualname__})"


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
    # bolt's, made on first use (bolt's own argument injection made it for every middleware)
    respond = context.respond
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
    # bolt's, made on first use (bolt's own argument injection made it for every middleware)
    respond = context.respond
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
