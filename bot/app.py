"""The composition root of the Slack bot: a bolt App with its listeners and middleware.

Clients are built once by the caller and injected: Redis, the cluster registry and, optionally,
the Slack WebClient (by default one on `SLACK_API_URL` that keeps to Slack's rate tiers and
waits out rate limits, server errors and dropped connections for up to two minutes, retrying a
post only when Slack cannot have acted on it). `build_app` does no network I/O but one
`auth.test`, which checks the bot token at start-up, and a first PING of Redis.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any

import redis
from slack_bolt import App
from slack_sdk import WebClient

from bot import middleware
from bot.access import Access, settled_first
from bot.approval import Approval
from bot.arrival_buttons import ArrivalButtons
from bot.availability import StoreCheck, StoreProbe, StoreWatch
from bot.click_pool import ClickPool
from bot.commands import SlashCommands
from bot.context import BotContext
from bot.pacing import PacedWebClient, Pacing
from bot.post_ack import HandOff
from bot.render.arrival import DISMISS_ACTION, MOVE_ACTION
from bot.render.blocks import APPROVE_ACTION, CANCEL_ACTION, REJECT_ACTION
from bot.render.loans import EXTEND_ACTION, RETURN_ACTION
from bot.shared_pacing import SharedPacing
from bot.slack_retry import TransientSlackErrors
from bot.texts import access as access_texts
from bot.texts import answers as answers_texts
from bot.texts import common as common_texts
from joinops.clusters.registry import ClusterRegistry
from joinops.settings import Settings

log = logging.getLogger(__name__)

COMMAND = common_texts.COMMAND
LISTENER_THREADS = 32  # listeners run here after their ack; the cluster checks take seconds
SLACK_TIMEOUT = 10  # seconds for one Web API call


def make_web_client(settings: Settings, client: redis.Redis | None = None) -> WebClient:
    """The bot's Slack client: `SLACK_API_URL`; every call paced to its method's tier, shared by
    the whole process (bot/pacing.py) and, given `client`, by every process of the bot through
    Redis (bot/shared_pacing.py); Slack's transient failures waited out for a bounded time, a
    post retried only when it cannot duplicate (bot/slack_retry.py)."""
    token = settings.secrets.slack_bot_token
    scale = settings.slack.rate_scale
    pacing = SharedPacing(client, scale) if client is not None else Pacing(scale)
    return PacedWebClient(
        token=token.get_secret_value() if token else None,
        base_url=settings.secrets.slack_api_url,
        timeout=SLACK_TIMEOUT,
        retry_handlers=[TransientSlackErrors(on_rate_limited=pacing.rate_limited)],
        pacing=pacing,
    )


def build_context(
    settings: Settings,
    *,
    redis: redis.Redis,
    clusters: ClusterRegistry,
    web_client: WebClient | None = None,
    clock: Callable[[], float] = time.time,
) -> BotContext:
    client = web_client or make_web_client(settings, redis)
    return BotContext.build(
        settings, redis_client=redis, clusters=clusters, client=client, clock=clock
    )


def build_app(
    settings: Settings,
    *,
    redis: redis.Redis,
    clusters: ClusterRegistry,
    web_client: WebClient | None = None,
    context: BotContext | None = None,
    listener_executor: Executor | None = None,
    work_pool: Executor | None = None,
    hand_off: HandOff | None = None,
    click_pool: ClickPool | None = None,
    store_watch: StoreWatch | None = None,
    clock: Callable[[], float] = time.time,
) -> App:
    """The bolt App. Pass `context` to share it with a relay, and `store_watch` to share the
    watch of Redis that the acks read; otherwise each is built. `listener_executor` runs bolt's
    listeners; a command's work after its ack goes to `hand_off` (`PostAckQueue.push`: the
    post-ack process's) or, without it, runs on `work_pool` in this process; `click_pool` runs
    a click's (bounded: bot/click_pool.py): whoever passes them shuts them down."""
    ctx = context or build_context(
        settings, redis=redis, clusters=clusters, web_client=web_client, clock=clock
    )
    secret = settings.secrets.slack_signing_secret
    # Without a signing secret (Socket Mode needs none) no HTTP request can ever verify: a random
    # one, rather than bolt's fallback to the environment or an empty key anyone could sign with.
    signing_secret = secret.get_secret_value() if secret else secrets.token_hex(32)
    executor = listener_executor or ThreadPoolExecutor(
        max_workers=LISTENER_THREADS, thread_name_prefix="joinops-bot"
    )
    app = App(
        name="joinops",
        client=ctx.client,
        signing_secret=signing_secret,
        request_verification_enabled=True,
        listener_executor=executor,
    )
    watch = store_watch or StoreWatch(StoreProbe(settings.secrets.redis_url))
    for function in (
        middleware.drop_slack_retries,
        middleware.answer_in_thread,
        middleware.keep_to_limits,
        StoreCheck(watch, settings.cluster_names, executor).check,
        Access(ctx, executor).check,
    ):
        app.use(middleware.Direct(function))
    commands = SlashCommands(ctx, work_pool, hand_off)
    approval = Approval(ctx)
    app.command(COMMAND)(commands.on_command)
    arrival_buttons = ArrivalButtons(ctx, commands.migrations)
    clicks = {
        APPROVE_ACTION: approval.on_approve,
        REJECT_ACTION: approval.on_reject,
        CANCEL_ACTION: commands.changes.on_cancel,
        EXTEND_ACTION: commands.loans.on_extend,
        RETURN_ACTION: commands.loans.on_return,
        MOVE_ACTION: arrival_buttons.on_move,
        DISMISS_ACTION: arrival_buttons.on_dismiss,
    }
    pool = click_pool or ClickPool()
    for action_id, listener in clicks.items():
        app.action(action_id)(pool.acked_then_run(settled_first(listener), _on_error))
    app.error(_on_error)
    return app


def _on_error(error: Exception, body: dict[str, Any], respond: Any, logger: logging.Logger) -> None:
    """A bug, not a refusal: the traceback goes to the log, a plain line to the user. Redis
    going away in the middle of the work is an outage, not a bug: said as such, no traceback."""
    if isinstance(error, redis.RedisError):
        logger.warning("the state store stopped answering while handling a request: %s", error)
        answer = access_texts.store_lost_midway()
    else:
        logger.error("unexpected error handling a Slack request", exc_info=error)
        answer = answers_texts.internal_error()
    if respond is None:
        return
    try:
        respond(text=answer, response_type="ephemeral", replace_original=False)
    except Exception as e:
        logger.warning("could not tell the user about the error: %s", e)
