"""A real `joinops serve --http` process on a test's configuration, for tests that need the
command itself (signals, crashes, restarts) rather than the in-process harness."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from slacksim.server import SlackSim
from slacksim.signing import Delivery, deliver
from tests.bot.harness import SECRET, until


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as answer:
            return answer.status == 200
    except (urllib.error.URLError, OSError):
        return False


STOP_SECONDS = 150  # SIGTERM to exit: the longest Slack retry the bot waits out, and a margin


def served_env(config: Path, sim: SlackSim, redis_url: str, secret: str = SECRET) -> dict[str, str]:
    """The environment of a `joinops serve` in HTTP mode against `sim` (no app token: not
    Socket Mode), signing with `secret`."""
    env = {
        **os.environ,
        "JOINOPS_CONFIG": str(config),
        "REDIS_URL": redis_url,
        "SLACK_BOT_TOKEN": sim.token,
        "SLACK_SIGNING_SECRET": secret,
        "SLACK_API_URL": sim.api_url,
    }
    env.pop("SLACK_APP_TOKEN", None)
    return env


class ServedBot:
    """`joinops serve --http` started and awaited until it answers /healthz; with `socket`,
    `joinops serve --health-port N` in Socket Mode, awaited until /livez answers (`url` is then
    the health server's)."""

    def __init__(
        self,
        config: Path,
        sim: SlackSim,
        redis_url: str,
        log: Path,
        *,
        socket: bool = False,
        health: bool = False,
    ) -> None:
        """`health`: HTTP mode with `--health-port` too (`health_url`)."""
        self.log = log
        self.url = f"http://127.0.0.1:{free_port()}"
        env = served_env(config, sim, redis_url)
        port = self.url.rsplit(":", 1)[1]
        args = ["serve", "--http", "--host", "127.0.0.1", "--port", port]
        self.health_url = f"http://127.0.0.1:{free_port()}" if health else ""
        if health:
            args += ["--health-port", self.health_url.rsplit(":", 1)[1]]
        if socket:
            env["SLACK_APP_TOKEN"] = sim.app_token
            args = ["serve", "--host", "127.0.0.1", "--health-port", port]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "cli", *args],
            env=env,
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
        )
        probe = self.url + ("/livez" if socket else "/healthz")
        until(lambda: healthy(probe) or self.process.poll() is not None, 30)
        assert self.process.poll() is None, log.read_text()

    def deliver(self, body: bytes, secret: str = SECRET) -> Delivery:
        return deliver(self.url + "/slack/events", body, secret)

    def send(self, body: bytes) -> None:
        assert self.deliver(body).status == 200

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def terminate(self) -> int:
        """SIGTERM and the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        # its last Slack update may be waiting out a 429 (bot/slack_retry.py): a busy machine's
        return self.process.wait(STOP_SECONDS)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.terminate()
