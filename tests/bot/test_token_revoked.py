"""A token Slack refuses (`token_revoked`, `invalid_auth`, ...) is fatal, not a warning: the
relay keeps every entry in Redis instead of marking it done, the probes say why, and once a token
works again what waited is delivered, in order. slacksim answers the refusal as Slack does: HTTP
200 with `{"ok": false, "error": "token_revoked"}` to every call of the app."""

from __future__ import annotations

from joinops.requests.events import GLOBAL_STREAM, Event, EventKind
from tests.bot.harness import until

ASK = "a-w-1 from clusterA to clusterB"
METHODS = ("chat.postMessage", "chat.update", "auth.test")


def _steps(bot, request_id: str) -> list[str]:  # type: ignore[no-untyped-def]
    """What a worker would say in the request's thread: three steps starting."""
    lines = {"check": "Re-check the rules", "join-material": "Prepare", "probe": "Probe"}
    for step, line in lines.items():
        bot.ctx.events.emit(
            Event(request_id, EventKind.STEP_STARTED, line, step=step, at=bot.ctx.clock())
        )
    return [f"`{step}` running: {line}" for step, line in lines.items()]


def test_a_revoked_token_keeps_progress_in_redis_until_a_token_works(make_bot):
    bot = make_bot()
    bot.relay.token_probe_every = 0.2
    bot.slash(ASK)
    request = bot.request_from_message(bot.wait_message())
    for method in METHODS:  # the app was uninstalled: Slack refuses its token everywhere
        bot.sim.faults.add(method, error="token_revoked", times=None)

    said = _steps(bot, request.id)
    until(lambda: bot.ctx.token.problem(), 30)
    assert bot.ctx.token.problem() == "Slack refuses the bot token (token_revoked)"
    pending = until(lambda: bot.redis.xpending(GLOBAL_STREAM, bot.relay.group)["pending"], 30)
    assert pending >= 1  # nothing marked done: it waits in Redis
    status, reason = _health(bot)
    assert status == 503 and reason == "Slack refuses the bot token (token_revoked)"
    assert not any(line in r for r in bot.thread(request.id) for line in said)

    bot.sim.faults.clear()  # a valid token again
    replies = bot.wait_thread(request.id, lambda rs: all(any(s in r for r in rs) for s in said))
    shown = [next(i for i, r in enumerate(replies) if s in r) for s in said]
    assert shown == sorted(shown)  # in the order they were said
    until(lambda: bot.ctx.token.problem() is None, 30)
    until(lambda: bot.redis.xpending(GLOBAL_STREAM, bot.relay.group)["pending"] == 0, 30)
    assert _health(bot) == (200, "ok")


def _health(bot) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(bot.server.url + "/healthz", timeout=5) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
