"""slacksim refuses a message over Slack's size limits as Slack does, on every way of sending
one: chat.postMessage, chat.update, chat.postEphemeral and a response_url."""

from collections.abc import Callable
from typing import Any

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.webhook import WebhookClient

from slacksim.server import SlackSim


def section(length: int) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": "x" * length}}


def button(text: str = "Approve", value: str = "r1") -> dict[str, Any]:
    return {
        "type": "actions",
        "elements": [
            {
                "type": "button",
                "action_id": "a",
                "text": {"type": "plain_text", "text": text},
                "value": value,
            }
        ],
    }


FITS = [section(3000)] * 3 + [{"type": "divider"}] * 46  # 49 blocks, 9,000 characters
OVER: dict[str, list[dict[str, Any]]] = {
    "invalid_blocks": [section(10)] * 51,
    "msg_blocks_too_long": [section(3000)] * 4 + [section(1)],
}
ONE_BLOCK_OVER = [
    section(3001),
    {"type": "header", "text": {"type": "plain_text", "text": "h" * 151}},
    {"type": "section", "fields": [{"type": "mrkdwn", "text": "f"}] * 11},
    {"type": "section", "fields": [{"type": "mrkdwn", "text": "f" * 2001}]},
    {"type": "context", "elements": [{"type": "mrkdwn", "text": "c"}] * 11},
    button(text="b" * 76),
    button(value="v" * 2001),
    {"type": "divider", "block_id": "i" * 256},
]


def error_of(call: Callable[[], object]) -> str:
    with pytest.raises(SlackApiError) as caught:
        call()
    return str(caught.value.response["error"])


def test_a_message_within_the_limits_is_accepted(client: WebClient) -> None:
    assert client.chat_postMessage(channel="C1", text="t", blocks=FITS)["ok"]


@pytest.mark.parametrize("error", list(OVER))
def test_post_update_and_ephemeral_refuse_what_slack_refuses(client: WebClient, error: str) -> None:
    blocks = OVER[error]
    ts = client.chat_postMessage(channel="C1", text="t", blocks=[section(5)])["ts"]

    assert error_of(lambda: client.chat_postMessage(channel="C1", text="t", blocks=blocks)) == error
    assert error_of(lambda: client.chat_update(channel="C1", ts=ts, text="t", blocks=blocks)) == (
        error
    )
    ephemeral = lambda: client.chat_postEphemeral(  # noqa: E731
        channel="C1", user="U1", text="t", blocks=blocks
    )
    assert error_of(ephemeral) == error


@pytest.mark.parametrize("block", ONE_BLOCK_OVER, ids=lambda b: str(b.get("type")))
def test_one_block_over_its_own_limit_is_invalid_blocks(client: WebClient, block: Any) -> None:
    assert error_of(lambda: client.chat_postMessage(channel="C1", text="t", blocks=[block])) == (
        "invalid_blocks"
    )


def test_a_response_url_refuses_blocks_over_the_limits(sim: SlackSim) -> None:
    hook = WebhookClient(sim.response_url("r", channel="C1", user="U1"))

    refused = hook.send(text="t", blocks=OVER["msg_blocks_too_long"])
    assert (refused.status_code, refused.body) == (400, "msg_blocks_too_long")
    assert hook.send(text="t", blocks=OVER["invalid_blocks"]).body == "invalid_blocks"
    assert hook.send(text="t", blocks=FITS).status_code == 200
    assert len(sim.ephemerals("U1")) == 1
