"""Signed requests into a real Bolt app, answered through SlackSim."""

import json
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest
from slack_bolt import Ack, App, Respond
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_sdk import WebClient
from slack_sdk.signature import SignatureVerifier

from slacksim.server import SlackSim
from slacksim.signing import (
    block_actions_body,
    block_actions_payload,
    deliver,
    sign,
    slash_command_body,
)

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"


def test_signature_is_accepted_by_slack_sdk_verifier() -> None:
    body = slash_command_body(text="node-1 to prod")
    headers = sign(body, SECRET)
    verifier = SignatureVerifier(SECRET)
    assert verifier.is_valid_request(body.decode(), headers)
    assert not SignatureVerifier("another-secret").is_valid_request(body.decode(), headers)
    assert not verifier.is_valid_request(body.decode() + "&x=1", headers)


def test_an_old_timestamp_is_refused_by_the_verifier() -> None:
    body = slash_command_body()
    stale = sign(body, SECRET, timestamp=int(time.time()) - 600)
    assert not SignatureVerifier(SECRET).is_valid_request(body.decode(), stale)


def test_retry_headers_are_added_on_request() -> None:
    headers = sign(b"x", SECRET, 1_733_150_000, retry_num=1)
    assert headers["X-Slack-Retry-Num"] == "1"
    assert headers["X-Slack-Retry-Reason"] == "http_timeout"
    assert headers["X-Slack-Request-Timestamp"] == "1733150000"
    assert headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert "X-Slack-Retry-Num" not in sign(b"x", SECRET)


def test_slash_command_body_has_slacks_fields() -> None:
    body = slash_command_body(
        text="status req-3f9a1c2b", user_id="U7", channel_id="C7", response_url="http://r"
    )
    fields = {k: v[0] for k, v in parse_qs(body.decode()).items()}
    assert fields["command"] == "/join"
    assert fields["text"] == "status req-3f9a1c2b"
    assert (fields["user_id"], fields["channel_id"], fields["response_url"]) == (
        "U7",
        "C7",
        "http://r",
    )
    assert fields["trigger_id"].count(".") == 2
    assert {"team_id", "team_domain", "user_name", "channel_name", "api_app_id"} <= fields.keys()


def test_block_actions_body_is_a_payload_field_holding_json() -> None:
    body = block_actions_body(
        action_id="approve", value="req-3f9a1c2b", message_ts="1733150000.000100"
    )
    [raw] = parse_qs(body.decode())["payload"]
    payload = json.loads(raw)
    assert payload["type"] == "block_actions"
    assert payload["actions"][0]["action_id"] == "approve"
    assert payload["actions"][0]["value"] == "req-3f9a1c2b"
    assert payload["container"]["message_ts"] == "1733150000.000100"
    assert payload["message"]["ts"] == "1733150000.000100"
    assert payload["channel"]["id"] == payload["container"]["channel_id"]
    assert payload["user"]["id"] and payload["team"]["id"] and payload["trigger_id"]
    ephemeral = block_actions_payload(action_id="a", value="v", message_ts="1.2", is_ephemeral=True)
    assert "message" not in ephemeral and ephemeral["container"]["is_ephemeral"] is True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def bolt_url(sim: SlackSim) -> Iterator[str]:
    """A Bolt app served over HTTP, calling the Web API on `sim`."""
    app = App(
        signing_secret=SECRET,
        client=WebClient(token=sim.token, base_url=sim.api_url),
    )

    @app.command("/join")
    def join(ack: Ack, command: dict[str, Any], respond: Respond) -> None:
        ack(f"got `{command['text']}`")
        respond(text=f"working on `{command['text']}`", response_type="in_channel")

    @app.action("approve")
    def approve(ack: Ack, body: dict[str, Any], client: WebClient) -> None:
        ack()
        client.chat_update(
            channel=body["channel"]["id"],
            ts=body["container"]["message_ts"],
            text=f"approved {body['actions'][0]['value']} by <@{body['user']['id']}>",
        )

    server: WSGIServer = make_server(
        "127.0.0.1", 0, SlackRequestHandler(app), handler_class=_QuietHandler
    )
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02})
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/slack/events"
    server.shutdown()
    thread.join()
    server.server_close()


def test_a_signed_slash_command_is_acked_and_answered(sim: SlackSim, bolt_url: str) -> None:
    response_url = sim.response_url("cmd-1", channel="C7")
    body = slash_command_body(text="node-1 to prod", channel_id="C7", response_url=response_url)

    delivery = deliver(bolt_url, body, SECRET)

    assert delivery.status == 200
    assert delivery.body.decode() == "got `node-1 to prod`"  # ack(str) answers plain text
    [reply] = sim.wait_for(lambda: sim.responses("cmd-1"))
    assert reply["text"] == "working on `node-1 to prod`"
    assert [m["text"] for m in sim.messages("C7").values()] == ["working on `node-1 to prod`"]


def test_a_wrongly_signed_request_is_refused(sim: SlackSim, bolt_url: str) -> None:
    body = slash_command_body(text="node-1 to prod")
    assert deliver(bolt_url, body, "not-the-secret").status == 401
    stale = deliver(bolt_url, body, SECRET, timestamp=int(time.time()) - 3600)
    assert stale.status == 401
    assert sim.response_urls == {}


def test_a_button_click_reaches_the_action_handler(
    sim: SlackSim, bolt_url: str, client: WebClient
) -> None:
    ts = client.chat_postMessage(channel="C7", text="Approve node-1?")["ts"]
    body = block_actions_body(
        action_id="approve",
        value="req-3f9a1c2b",
        user_id="U7",
        channel_id="C7",
        message_ts=ts,
        message=sim.messages("C7")[ts],
        response_url=sim.response_url("act-1"),
    )

    assert deliver(bolt_url, body, SECRET).status == 200

    sim.wait_for(lambda: sim.calls_to("chat.update"))
    assert sim.messages("C7")[ts]["text"] == "approved req-3f9a1c2b by <@U7>"
