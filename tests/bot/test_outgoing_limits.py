"""Nothing Slack would refuse for its size leaves the bot (`bot.slack_limits.outgoing`, on every
chat.postMessage, chat.update and chat.postEphemeral of the bot's client): a notification text
over 40,000 characters is cut and the message still posted; blocks over a limit are refused
before Slack sees them, with Slack's own error and a log line."""

from __future__ import annotations

import logging

import pytest
from slack_sdk.errors import SlackApiError

from bot.render.blocks import section
from tests.bot.harness import CHANNEL


def test_a_notification_text_over_40000_characters_is_cut_and_the_message_posted(bot):
    long_text = "word " * 9_000  # 45,000 characters: Slack answers msg_too_long
    answer = bot.ctx.client.chat_postMessage(channel=CHANNEL, text=long_text)
    posted = bot.sim.messages(CHANNEL)[answer["ts"]]
    assert len(posted["text"]) == 40_000
    assert posted["text"].endswith("…")


def test_a_section_over_3000_characters_is_refused_before_it_reaches_slack(bot, caplog):
    before = len(bot.sim.calls_to("chat.postMessage"))
    too_long = {"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3_001}}
    with (
        caplog.at_level(logging.ERROR, logger="bot.pacing"),
        pytest.raises(SlackApiError) as refused,
    ):
        bot.ctx.client.chat_postMessage(channel=CHANNEL, text="t", blocks=[too_long])
    assert refused.value.response["error"] == "invalid_blocks"  # what Slack would have said
    assert len(bot.sim.calls_to("chat.postMessage")) == before  # Slack never saw it
    assert "breaks Slack's limits" in caplog.text and "3001 characters > 3000" in caplog.text
    fits = bot.ctx.client.chat_postMessage(channel=CHANNEL, text="t", blocks=[section("x" * 3000)])
    assert fits["ok"]
