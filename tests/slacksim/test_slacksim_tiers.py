"""SlackSim enforces Slack's rate tiers (429 + Retry-After) and can hold a call on its way in."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from slacksim.server import SlackSim
from slacksim.tiers import TIER_3, Tiers


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def sim(clock: Clock) -> Iterator[SlackSim]:
    with SlackSim(tiers=Tiers(clock=clock)) as running:
        yield running


def _client(sim: SlackSim) -> WebClient:
    return WebClient(token=sim.token, base_url=sim.api_url, timeout=5, retry_handlers=[])


def _limited(call) -> SlackApiError:  # type: ignore[no-untyped-def]
    with pytest.raises(SlackApiError) as caught:
        call()
    assert caught.value.response.status_code == 429
    assert caught.value.response["error"] == "ratelimited"
    return caught.value


def test_chat_update_is_tier_3_for_the_whole_workspace(sim: SlackSim, clock: Clock) -> None:
    client = _client(sim)
    ts = [client.chat_postMessage(channel=f"C{i}", text="x")["ts"] for i in range(4)]
    for n in range(TIER_3.burst):  # a burst, over several messages: one budget for all
        client.chat_update(channel=f"C{n % 4}", ts=ts[n % 4], text=f"v{n}")
    refused = _limited(lambda: client.chat_update(channel="C1", ts=ts[1], text="late"))
    assert refused.response.headers["Retry-After"] == "2"  # 50 a minute: 1.2 s, whole seconds
    clock.now += 1.2
    client.chat_update(channel="C1", ts=ts[1], text="in time")
    assert sim.messages("C1")[ts[1]]["text"] == "in time"
    assert [c.status for c in sim.calls_to("chat.update")][-2:] == [429, 200]


def test_posting_is_about_one_a_second_per_channel(sim: SlackSim, clock: Clock) -> None:
    client = _client(sim)
    for n in range(4):  # a short burst is allowed
        client.chat_postMessage(channel="C1", text=str(n))
    _limited(lambda: client.chat_postMessage(channel="C1", text="too soon"))
    client.chat_postMessage(channel="C2", text="another channel has its own")
    clock.now += 1.0
    client.chat_postMessage(channel="C1", text="a second later")
    assert [m["text"] for m in sim.messages("C1").values()] == [*"0123", "a second later"]
    assert sim.tiers.limited == 1


def test_a_sped_up_sim_keeps_the_shape_with_shorter_waits(clock: Clock) -> None:
    with SlackSim(tiers=Tiers(20, clock=clock)) as sim:
        client = _client(sim)
        for n in range(4):
            client.chat_postMessage(channel="C1", text=str(n))
        refused = _limited(lambda: client.chat_postMessage(channel="C1", text="x"))
        assert refused.response.headers["Retry-After"] == "0.05"  # a second, twenty times faster
        clock.now += 0.05
        client.chat_postMessage(channel="C1", text="x")


def test_a_held_call_waits_for_the_test_and_a_dropped_one_is_never_acted_on(
    sim: SlackSim,
) -> None:
    client = _client(sim)
    hold = sim.holds.add("chat.postMessage", lambda params: params.get("text") == "held")
    dropped = sim.holds.add("chat.postMessage", lambda params: params.get("text") == "dropped")
    client.chat_postMessage(channel="C1", text="not held")
    with ThreadPoolExecutor(2) as pool:
        answer = pool.submit(client.chat_postMessage, channel="C1", text="held")
        hold.wait_arrived()
        assert [m["text"] for m in sim.messages("C1").values()] == ["not held"]
        hold.release()
        assert answer.result(5)["ok"]
        lost = pool.submit(client.chat_postMessage, channel="C1", text="dropped")
        dropped.wait_arrived()
        dropped.drop()
        with pytest.raises(ConnectionError):  # closed without an answer (RemoteDisconnected)
            lost.result(5)
    assert [m["text"] for m in sim.messages("C1").values()] == ["not held", "held"]
