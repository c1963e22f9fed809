"""`joinops serve`: the command runs the bot over HTTP and stops on SIGTERM; it refuses to start
without what its mode needs."""

from __future__ import annotations

import pytest

from cli import main
from slacksim.signing import slash_command_body
from tests.bot.harness import ack_text
from tests.bot.served import ServedBot
from tests.support.clusters import write_config


def test_serve_http_answers_slack_and_stops_on_sigterm(world, sim, redis_url, tmp_path):
    bot = ServedBot(write_config(world, tmp_path), sim, redis_url, tmp_path / "serve.log")
    try:
        delivery = bot.deliver(slash_command_body(text="help"))
        assert delivery.status == 200 and "/join" in ack_text(delivery)
        assert bot.deliver(slash_command_body(text="help"), "wrong").status == 401
    finally:
        code = bot.terminate()
    assert code == 0, bot.log.read_text()


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
