"""slacksim's Socket Mode: apps.connections.open, the WebSocket and its envelope protocol, met by
slack_sdk's own Socket Mode client (the one bolt's SocketModeHandler runs) and by a raw socket."""

from __future__ import annotations

import base64
import json
import os
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode.builtin import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from bot.socket_mode import SteadyClient, close_client
from slacksim.server import SlackSim
from slacksim.socket_mode import OP_CLOSE, OP_PING, OP_PONG, OP_TEXT, accept_key, read_frame


@pytest.fixture
def app_client(sim: SlackSim) -> WebClient:
    return WebClient(token=sim.app_token, base_url=sim.api_url, timeout=5)


@pytest.fixture
def sdk(sim: SlackSim, client: WebClient) -> Iterator[SocketModeClient]:
    """slack_sdk's builtin client as the bot runs it (bot/socket_mode.py `SteadyClient`: the
    SDK's own loses its link's reads in a reconnect race), acking every request with a payload
    naming its type."""
    running = SteadyClient(app_token=sim.app_token, web_client=client, ping_interval=0.5)

    def answer(c: SocketModeClient, request: SocketModeRequest) -> None:
        c.send_socket_mode_response(
            SocketModeResponse(envelope_id=request.envelope_id, payload={"text": request.type})
        )

    running.socket_mode_request_listeners.append(answer)  # type: ignore[arg-type]
    running.connect()
    yield running
    close_client(running)  # the SDK's own close can hang (bot/socket_mode.py says how)


def _masked(opcode: int, data: bytes) -> bytes:
    mask = os.urandom(4)
    assert len(data) < 126
    body = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
    return bytes([0x80 | opcode, 0x80 | len(data)]) + mask + body


def _upgrade(url: str) -> tuple[socket.socket, bytes]:
    """Open the WebSocket by hand: the socket and the handshake's status line."""
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=5)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET {parts.path}?{parts.query} HTTP/1.1\r\nHost: {parts.hostname}\r\n"
            f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1)
        if not chunk:
            break
        head += chunk
    if head.startswith(b"HTTP/1.1 101"):
        assert f"Sec-WebSocket-Accept: {accept_key(key)}".encode() in head
    return sock, head.split(b"\r\n")[0]


def test_connections_open_takes_only_the_app_token(sim, client, app_client):
    url = app_client.apps_connections_open(app_token=sim.app_token)["url"]
    assert url.startswith(f"ws://127.0.0.1:{urlsplit(sim.url).port}/link/?ticket=")
    with pytest.raises(SlackApiError) as bot_token:
        client.apps_connections_open(app_token=sim.token)
    assert bot_token.value.response["error"] == "not_allowed_token_type"
    with pytest.raises(SlackApiError) as app_token_elsewhere:
        app_client.chat_postMessage(channel="C1", text="hi")
    assert app_token_elsewhere.value.response["error"] == "not_allowed_token_type"
    with pytest.raises(SlackApiError) as unknown:
        client.apps_connections_open(app_token="xapp-someone-else")
    assert unknown.value.response["error"] == "invalid_auth"


def test_hello_ping_ack_and_close_over_a_raw_socket_and_a_ticket_is_used_once(sim, app_client):
    url = app_client.apps_connections_open(app_token=sim.app_token)["url"]
    sock, status = _upgrade(url)
    stream = sock.makefile("rb")
    assert status == b"HTTP/1.1 101 Switching Protocols"
    fin, opcode, data = read_frame(stream)
    hello = json.loads(data)
    assert (fin, opcode) == (True, OP_TEXT)
    assert hello["type"] == "hello" and hello["connection_info"]["app_id"] == "A0APP00001"

    sock.sendall(_masked(OP_PING, b"are you there"))
    assert read_frame(stream) == (True, OP_PONG, b"are you there")

    envelope = sim.socket.send("events_api", {"event": {"type": "app_mention"}})
    sent = json.loads(read_frame(stream)[2])
    assert sent["envelope_id"] == envelope and sent["type"] == "events_api"
    assert sent["payload"] == {"event": {"type": "app_mention"}}
    sock.sendall(_masked(OP_TEXT, json.dumps({"envelope_id": envelope}).encode()))
    assert sim.socket.wait_ack(envelope) == {"envelope_id": envelope}

    sock.sendall(_masked(OP_CLOSE, b"\x03\xe8"))
    assert read_frame(stream)[1] == OP_CLOSE
    sim.wait_for(lambda: not sim.socket.connections[0].open)
    assert sim.socket.connections[0].closed_by_client
    sock.close()

    again, status = _upgrade(url)  # the ticket was used
    assert status.startswith(b"HTTP/1.1 400")
    again.close()


def test_the_sdk_client_acks_slash_commands_and_clicks_with_their_payloads(sim, sdk):
    first = sim.socket.wait_connected()
    slash = sim.socket.slash_command(text="a-w-1 from clusterA to clusterB")
    assert sim.socket.wait_ack(slash) == {
        "envelope_id": slash,
        "payload": {"text": "slash_commands"},
    }
    click = sim.socket.block_actions(action_id="join_approve", value="r1", message_ts="1.000100")
    assert sim.socket.wait_ack(click)["payload"] == {"text": "interactive"}
    sent = {e["envelope_id"]: e for e in sim.socket.envelopes}
    assert sent[slash]["payload"]["text"] == "a-w-1 from clusterA to clusterB"
    assert sent[slash]["accepts_response_payload"] is True
    assert sent[click]["payload"]["actions"][0]["action_id"] == "join_approve"
    assert sent[click]["accepts_response_payload"] is False
    assert sim.socket.current is first and len(sim.calls_to("apps.connections.open")) == 1


@pytest.mark.parametrize("reason", ["refresh_requested", "warning", "link_disabled"])
def test_a_disconnect_request_moves_the_client_to_a_new_connection(sim, sdk, reason):
    first = sim.socket.wait_connected()
    sim.socket.disconnect(reason)
    second = sim.socket.wait_connected(2)
    assert second is not first and second.ticket != first.ticket
    sim.wait_for(lambda: not first.open)  # the client closes the old link itself
    envelope = sim.socket.slash_command(text="help")
    assert sim.socket.wait_ack(envelope)["envelope_id"] == envelope
    assert envelope in {a["envelope_id"] for a in second.received}
    assert len(sim.calls_to("apps.connections.open")) == 2


def test_a_dropped_connection_is_reopened_by_the_client(sim, sdk):
    first = sim.socket.wait_connected()
    sim.socket.drop()
    assert sim.socket.current is None
    second = sim.socket.wait_connected(2, timeout=15)
    assert second is not first
    envelope = sim.socket.slash_command(text="help")
    assert sim.socket.wait_ack(envelope)["envelope_id"] == envelope


def test_stopping_the_sim_closes_its_sockets():
    sim = SlackSim().start()
    web = WebClient(token=sim.token, base_url=sim.api_url, timeout=5)
    running = SteadyClient(app_token=sim.app_token, web_client=web, auto_reconnect_enabled=False)
    try:
        running.connect()
        connection = sim.socket.wait_connected()
        sim.stop()
        assert not connection.open
    finally:
        close_client(running)
