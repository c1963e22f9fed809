"""`joinops sandbox --slack`: the real bot in HTTP mode, Slack simulated by slacksim, and a web
page on loopback that stands in for the Slack channel (slacksim.web).

What the page sends is signed and delivered to the bot's `POST /slack/events` as Slack sends
it; what the bot posts lands in slacksim, and the page draws it from there. A worker process
runs the migrations on the sandbox's configuration.

The listeners are bound before anything is started (a busy page port is refused with nothing to
undo), and whatever was started is stopped on every way out, within seconds: the worker is
asked to stop, then told (RQ's cold shutdown ends the job it runs), then killed with its
process group.
"""

from __future__ import annotations

import errno
import os
import secrets
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import yaml
from pydantic import SecretStr

from bot.arrivals import ArrivalWatcher
from bot.availability import StoreProbe
from bot.http import SlackWsgi
from bot.serve import HttpServer, assemble
from cli import sandbox_texts
from joinops.children import ended_with_parent
from joinops.errors import UsageError
from joinops.settings import FileConfig, Secrets, Settings, build_settings
from slacksim.server import SlackSim
from slacksim.web import CHANNEL_ID, ChannelPage, Person

REQUESTER = Person("U0SANDREQ1", "alice", "requester")
APPROVER = Person("U0SANDBOX1", "bob", "approver")  # the sandbox's joinops.yaml approver
CHANNEL = CHANNEL_ID  # the page's channel: the sandbox's arrivals are announced there
WORKER_WARM_SECONDS = 3.0  # for an idle worker to end after SIGTERM (RQ's warm shutdown)
WORKER_COLD_SECONDS = 5.0  # after the second SIGTERM (RQ's cold shutdown: the job is ended)
RELAY_STOP_SECONDS = 2.0  # for the relay to deliver what it holds (the next run starts afresh)


def check_port_free(port: int) -> None:
    """Refuse a page port something listens on, before the sandbox starts anything."""
    if port == 0:
        return
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the page's server
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as e:
            raise _port_refused(port, e) from None


@contextmanager
def slack_sandbox(config: Path, redis_url: str, port: int, log: Path, fresh: bool) -> Iterator[str]:
    """Run slacksim, the bot, a worker and the page; yields the page's URL."""
    with SlackSim() as sim, ExitStack() as started:
        secret = secrets.token_hex(16)
        settings = _settings(config, redis_url, sim, secret)
        bot = assemble(settings)
        server = HttpServer(
            SlackWsgi(
                bot.app,
                secret,
                healthy=lambda: bot.relay.alive,
                ready=StoreProbe(redis_url).problem,
            ),
            "127.0.0.1",
            0,
        )
        started.callback(server.stop)
        page = _page(sim, server.url + "/slack/events", secret, port)
        started.callback(page.stop)
        bot.relay.start()
        started.callback(bot.relay.stop, RELAY_STOP_SECONDS)
        if settings.arrivals:
            started.callback(ArrivalWatcher(bot.ctx).start().stop)
        server.start()
        started.callback(stop_worker, _start_worker(config, redis_url, log, fresh))
        page.start()
        yield page.url


def _page(sim: SlackSim, events_url: str, secret: str, port: int) -> ChannelPage:
    try:
        return ChannelPage(sim, events_url, secret, [REQUESTER, APPROVER], port=port)
    except OSError as e:  # taken since check_port_free looked
        raise _port_refused(port, e) from None


def _port_refused(port: int, error: OSError) -> UsageError:
    busy = error.errno == errno.EADDRINUSE
    return UsageError(sandbox_texts.port_refused(port, busy, error.strerror or str(error)))


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


def _start_worker(config: Path, redis_url: str, log: Path, fresh: bool) -> subprocess.Popen[bytes]:
    """The worker, in a session of its own: the terminal's Ctrl-C is the sandbox's to pass on
    (RQ would take it for a warm shutdown and finish a whole migration first)."""
    env = {**os.environ, "JOINOPS_CONFIG": str(config.resolve()), "REDIS_URL": redis_url}
    with log.open("wb" if fresh else "ab") as output:
        return subprocess.Popen(
            ended_with_parent([sys.executable, "-m", "cli", "worker", "--log-format", "text"]),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def stop_worker(worker: subprocess.Popen[bytes]) -> None:
    """SIGTERM (RQ: stop once the job ends), SIGTERM again (RQ: end the job now), then SIGKILL;
    returns once it has ended, within seconds. Its process group goes with it: RQ's scheduler
    runs in a process of its own."""
    for grace in (WORKER_WARM_SECONDS, WORKER_COLD_SECONDS):
        if worker.poll() is not None:
            break
        worker.terminate()
        try:
            worker.wait(grace)
            break
        except subprocess.TimeoutExpired:
            continue
    try:
        os.killpg(worker.pid, signal.SIGKILL)  # the group is named by its leader, the worker
    except ProcessLookupError:
        pass  # all of it has ended
    worker.wait()
