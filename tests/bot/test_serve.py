"""`joinops serve`: the command runs the bot over HTTP and stops on SIGTERM; it refuses to start
without what its mode needs."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request

import pytest

from cli import main
from slacksim.signing import slash_command_body
from tests.bot.harness import ack_text, until
from tests.bot.served import ServedBot
from tests.support.clusters import write_config
from tests.support.faults import RedisServer


def test_serve_http_answers_slack_and_stops_on_sigterm(world, sim, redis_url, tmp_path):
    bot = ServedBot(write_config(world, tmp_path), sim, redis_url, tmp_path / "serve.log")
    try:
        delivery = bot.deliver(slash_command_body(text="help"))
        assert delivery.status == 200 and "/join" in ack_text(delivery)
        assert bot.deliver(slash_command_body(text="help"), "wrong").status == 401
    finally:
        code = bot.terminate()
    assert code == 0, bot.log.read_text()


def test_a_stop_while_a_connection_is_kept_alive_ends_cleanly(world, sim, redis_url, tmp_path):
    """Load balancers and Slack's own client keep a connection open between requests; waitress
    holds such a connection with no request on it. The stop waits for requests being answered,
    and an idle connection is none: exit 0, no traceback (the stop once tripped over it)."""
    bot = ServedBot(write_config(world, tmp_path), sim, redis_url, tmp_path / "serve.log")
    host, port = bot.url.removeprefix("http://").rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=30) as kept:
            kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: joinops\r\n\r\n")
            answer = b""
            while not answer.endswith(b"ok"):  # the answer read: the connection is now idle
                chunk = kept.recv(4096)
                assert chunk, answer
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 200")
            code = bot.terminate()
    finally:
        bot.stop()
    log = bot.log.read_text()
    assert code == 0, log
    assert "Traceback" not in log, log


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


def test_in_http_mode_a_redis_outage_leaves_the_bot_ready(world, sim, tmp_path):
    """Out of the Service, Slack would get `dispatch_failed` for every command; in it, the bot
    answers "cannot take requests right now" itself (tests/bot/test_store_down.py)."""
    redis = RedisServer(tmp_path / "redis")
    redis.start()
    bot = ServedBot(
        write_config(world, tmp_path), sim, redis.url, tmp_path / "serve.log", health=True
    )
    try:
        assert _get(bot.health_url + "/readyz") == (200, "ok")
        redis.shutdown()
        # the bot has noticed (its own /healthz says so), and still takes Slack's requests
        until(lambda: _get(bot.url + "/healthz")[0] == 503, 30)
        assert _get(bot.health_url + "/readyz") == (200, "ok")
        url = sim.response_url("while-down", channel="C0JOINOPS1", user="U0USER0001")
        answer = bot.deliver(slash_command_body(text="list", response_url=url))
        said = ack_text(answer) or until(lambda: sim.responses("while-down"), 30)[0]["text"]
        assert "queue/state store" in said  # the bot's own answer, not Slack's dispatch_failed
        assert _get(bot.health_url + "/livez") == (200, "ok")
    finally:
        bot.stop()
        redis.stop()


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
