"""`joinops serve`: the command runs the bot over HTTP and stops on SIGTERM; it refuses to start
without what its mode needs."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from cli import main
from slacksim.signing import deliver, slash_command_body
from tests.bot.harness import SECRET, ack_text, until
from tests.support.clusters import write_config


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as answer:
            return answer.status == 200
    except (urllib.error.URLError, OSError):
        return False


def test_serve_http_answers_slack_and_stops_on_sigterm(world, sim, redis_url, tmp_path):
    config = write_config(world, tmp_path)
    port = _free_port()
    env = {
        **os.environ,
        "JOINOPS_CONFIG": str(config),
        "REDIS_URL": redis_url,
        "SLACK_BOT_TOKEN": sim.token,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": sim.api_url,
    }
    env.pop("SLACK_APP_TOKEN", None)
    log = tmp_path / "serve.log"
    command = ["serve", "--http", "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(
        [sys.executable, "-m", "cli", *command],
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        until(lambda: _healthy(base + "/healthz") or process.poll() is not None, 30)
        assert process.poll() is None, log.read_text()
        delivery = deliver(base + "/slack/events", slash_command_body(text="help"), SECRET)
        assert delivery.status == 200 and "/join" in ack_text(delivery)
        bad = deliver(base + "/slack/events", slash_command_body(text="help"), "wrong")
        assert bad.status == 401
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=10)
    assert code == 0, log.read_text()


def test_serve_refuses_to_start_without_what_its_mode_needs(world, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("JOINOPS_CONFIG", str(write_config(world, tmp_path)))
    for name in ("SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_BOT_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    assert main(["serve"]) == 2
    assert "SLACK_APP_TOKEN: not set" in capsys.readouterr().err
    assert main(["serve", "--http"]) == 2
    assert "SLACK_SIGNING_SECRET: not set" in capsys.readouterr().err
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "s")
    assert main(["serve", "--http"]) == 2
    assert "SLACK_BOT_TOKEN: not set" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["serve", "--help"]])
def test_serve_is_a_command(argv, capsys):
    with pytest.raises(SystemExit):
        main(argv)
    assert "--http" in capsys.readouterr().out
