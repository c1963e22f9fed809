"""`joinops sandbox --slack`: the real bot in HTTP mode, Slack simulated by slacksim, and a web
page on loopback that stands in for the Slack channel (slacksim.web).

What the page sends is signed and delivered to the bot's `POST /slack/events` as Slack sends
it; what the bot posts lands in slacksim, and the page draws it from there. A worker process
runs the migrations on the sandbox's configuration.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis
import yaml
from pydantic import SecretStr

from bot.arrivals import ArrivalWatcher
from bot.availability import StoreProbe
from bot.http import SlackWsgi
from bot.serve import HttpServer, assemble
from cli import texts
from joinops.errors import ConfigError
from joinops.settings import FileConfig, Secrets, Settings, build_settings
from slacksim.server import SlackSim
from slacksim.web import CHANNEL_ID, ChannelPage, Person

REQUESTER = Person("U0SANDREQ1", "alice", "requester")
APPROVER = Person("U0SANDBOX1", "bob", "approver")  # the sandbox's joinops.yaml approver
CHANNEL = CHANNEL_ID  # the page's channel: the sandbox's arrivals are announced there


@contextmanager
def slack_sandbox(config: Path, redis_url: str, port: int, log: Path) -> Iterator[str]:
    """Run slacksim, the bot, a worker and the page; yields the page's URL."""
    _check_redis(redis_url)
    with SlackSim() as sim:
        secret = secrets.token_hex(16)
        settings = _settings(config, redis_url, sim, secret)
        bot = assemble(settings)
        bot.relay.start()
        arrivals = ArrivalWatcher(bot.ctx).start() if settings.arrivals else None
        server = HttpServer(
            SlackWsgi(
                bot.app,
                secret,
                healthy=lambda: bot.relay.alive,
                ready=StoreProbe(redis_url).problem,
            ),
            "127.0.0.1",
            0,
        ).start()
        worker = _start_worker(config, redis_url, log)
        page = ChannelPage(
            sim, server.url + "/slack/events", secret, [REQUESTER, APPROVER], port=port
        )
        try:
            with page:
                yield page.url
        finally:
            worker.terminate()
            worker.wait(30)
            server.stop()
            if arrivals is not None:
                arrivals.stop()
            bot.relay.stop()


def _settings(config: Path, redis_url: str, sim: SlackSim, secret: str) -> Settings:
    raw = yaml.safe_load(config.read_text())
    secrets_ = Secrets(
        redis_url=redis_url,
        slack_bot_token=SecretStr(sim.token),
        slack_signing_secret=SecretStr(secret),
        slack_app_token=None,
        slack_api_url=sim.api_url,
    )
    return build_settings(FileConfig.model_validate(raw), secrets_)


def _check_redis(redis_url: str) -> None:
    try:
        redis.Redis.from_url(redis_url, socket_connect_timeout=2).ping()
    except redis.RedisError as e:
        raise ConfigError([texts.sandbox_needs_redis(redis_url, str(e))]) from None


def _start_worker(config: Path, redis_url: str, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "JOINOPS_CONFIG": str(config.resolve()), "REDIS_URL": redis_url}
    return subprocess.Popen(
        [sys.executable, "-m", "cli", "worker", "--log-format", "text"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
    )
