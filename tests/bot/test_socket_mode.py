"""The bot over Socket Mode, end to end: slacksim's WebSocket → bolt's Socket Mode client → the
same app as HTTP mode → a real `joinops worker` → the thread. Reconnects after Slack drops the
link or asks for a refresh; envelopes it does not handle are acked, never fatal."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from slack_sdk import WebClient
from slack_sdk.socket_mode.builtin import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from bot.socket_mode import SteadyClient, close_client
from joinops.requests.lifecycle import State
from tests.bot.harness import APPROVER, REQUESTER, buttons, text_of, until


def _final(replies: list[str]) -> bool:
    return any(r.startswith((":tada:", ":red_circle:", ":white_circle:")) for r in replies)


def _request_then_approve(bot, node: str) -> str:  # type: ignore[no-untyped-def]
    ack, _ = bot.socket_slash(f"{node} from clusterA to clusterB")
    assert set(ack) <= {"envelope_id", "payload"}
    message = bot.wait_message()
    request = bot.request_from_message(message)
    assert buttons(message) == [
        ("join_approve", request.id),
        ("join_reject", request.id),
        ("join_cancel", request.id),
    ]
    clicked, click_rid = bot.socket_click("join_approve", request.id, APPROVER)
    assert clicked["envelope_id"]
    replies = bot.wait_thread(request.id, _final)
    assert replies[0].startswith(":white_check_mark: Step 1/8 `check` done")  # no approval reply
    assert replies[-1].startswith(f":tada: <@{REQUESTER}> done: `{node}` moved from clusterA")
    assert bot.request(request.id).state is State.SUCCEEDED
    assert bot.answers(click_rid) == []
    return str(request.id)


def test_request_approval_and_thread_progress_over_socket_mode(bot, world):
    bot.start_worker()
    bot.connect_socket()
    request_id = _request_then_approve(bot, "a-w-1")

    replies = bot.thread(request_id)
    lines = [line for r in replies for line in r.split("\n")]  # steps ended meanwhile: grouped
    assert sum(line.startswith(":white_check_mark:") for line in lines) == 8  # every step's end
    root = bot.wait_root(request_id, lambda t: "Succeeded" in t)
    assert buttons(root) == []
    assert world.cluster("clusterB").node("a-w-1") is not None
    assert world.cluster("clusterA").node("a-w-1") is None
    assert bot.sim.calls_to("apps.connections.open")[0].token == bot.sim.app_token

    _, rid = bot.socket_slash(f"status {request_id}")
    assert f"*Request `{request_id}`*: succeeded" in bot.wait_answer(rid)


def test_a_requester_cannot_approve_their_own_request_over_the_socket(bot):
    bot.connect_socket()
    bot.socket_slash("a-w-2 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    _, rid = bot.socket_click("join_approve", request.id, REQUESTER)
    assert bot.wait_answer(rid)
    assert bot.request(request.id).state is State.PENDING


@pytest.mark.parametrize("how", ["drop", "refresh_requested"])
def test_after_slack_drops_the_link_or_asks_a_refresh_the_next_request_works(bot, how):
    bot.start_worker()
    socket = bot.connect_socket()
    first = bot.sim.socket.current
    if how == "drop":
        bot.sim.socket.drop()
    else:
        bot.sim.socket.disconnect(how)
    second = bot.sim.socket.wait_connected(2, timeout=15)
    assert second is not first
    until(lambda: socket.down_for() is None, 10)  # the SDK takes the new link a moment later
    _request_then_approve(bot, "a-w-2")
    assert len(bot.sim.calls_to("apps.connections.open")) >= 2  # the SDK may open one more


def test_envelopes_the_bot_does_not_handle_are_acked_and_logged(bot, caplog):
    bot.connect_socket()
    caplog.set_level(logging.INFO, logger="bot.socket_mode")
    socket = bot.sim.socket
    unknown = socket.send("presence_change", {"user": "U1", "presence": "away"})
    assert socket.wait_ack(unknown) == {"envelope_id": unknown}
    no_payload = socket.send("slash_commands", None)
    assert socket.wait_ack(no_payload) == {"envelope_id": no_payload}
    listless = socket.send("interactive", [1, 2])
    assert socket.wait_ack(listless) == {"envelope_id": listless}
    broken = socket.send("interactive", {"type": "block_actions", "actions": []})
    assert socket.wait_ack(broken) == {"envelope_id": broken}
    nobody = socket.send("events_api", {"event": {"type": "reaction_added"}})
    assert socket.wait_ack(nobody) == {"envelope_id": nobody}

    logged = caplog.text
    assert "unknown type 'presence_change'" in logged and unknown in logged
    assert no_payload in logged and listless in logged and broken in logged
    assert "U1" not in logged  # payloads are not logged

    ack, _ = bot.socket_slash("help")  # still serving: the answer comes in the ack
    assert "moves Kubernetes nodes" in text_of(ack["payload"])


def test_a_close_the_sdks_reading_thread_raced_still_returns(sim):
    """slack_sdk 3.48's `close()` sets the session's `terminated` flag, closes the link, then
    waits with no timeout for the thread that reads it; but that thread, each time it begins a
    read of a live link, sets the flag back to False. A close held up between its first two
    moves (a busy machine; a CI run hung so, the thread asleep in its read loop and the close
    joining it) lets the thread begin a read and clear the flag, and that read then waits for a
    flag nobody sets. Here the close is held up just there: its `disconnect` waits (up to 2 s)
    until the thread has begun its next read."""
    web = WebClient(token=sim.token, base_url=sim.api_url, timeout=5)
    client = SocketModeClient(app_token=sim.app_token, web_client=web, auto_reconnect_enabled=False)
    client.connect()
    sim.socket.wait_connected()
    disconnect = client.disconnect

    def held_up() -> None:  # the closing thread descheduled between the flag and the link
        deadline = time.monotonic() + 2.0
        while client.current_session_state.terminated and time.monotonic() < deadline:
            time.sleep(0.01)
        disconnect()

    client.disconnect = held_up  # type: ignore[method-assign]
    closing = threading.Thread(target=close_client, args=(client,), name="test-close")
    closing.start()
    closing.join(30)
    assert not closing.is_alive(), "the close waited on the SDK's reading thread"
    assert not client.current_session_runner.is_alive()


def test_after_a_reconnect_the_new_link_is_read_even_when_the_reader_raced_it(sim):
    """A reconnect (Slack's `refresh_requested`, every few hours) marks the old session ended
    and only then closes it. slack_sdk 3.48's reading thread, beginning a read in between,
    cleared that mark and read the old link, which then closed: the read waited forever and the
    new link was never read — no envelope acked, the client still "connected". Here the
    reconnect is held up just there: the old link's close waits (up to 2 s) for a read to begin
    on it."""
    web = WebClient(token=sim.token, base_url=sim.api_url, timeout=5)
    client = SteadyClient(app_token=sim.app_token, web_client=web, ping_interval=0.5)

    def answer(c: SocketModeClient, request: SocketModeRequest) -> None:
        c.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id))

    client.socket_mode_request_listeners.append(answer)  # type: ignore[arg-type]
    try:
        client.connect()
        first = sim.socket.wait_connected()
        old_state, old_session = client.current_session_state, client.current_session
        close_old = old_session.close

        def held_up() -> None:  # the reconnecting thread descheduled before the close
            deadline = time.monotonic() + 2.0
            while old_state.terminated and time.monotonic() < deadline:
                time.sleep(0.01)
            close_old()

        old_session.close = held_up  # type: ignore[method-assign]
        sim.socket.disconnect("refresh_requested")
        second = sim.socket.wait_connected(2)
        assert second is not first
        envelope = sim.socket.slash_command(text="help")
        assert sim.socket.wait_ack(envelope, timeout=30)["envelope_id"] == envelope
    finally:
        close_client(client)
