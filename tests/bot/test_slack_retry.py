"""The bot's Slack client waits out 429s, 5xx and dropped connections for a bounded time, then
gives up; what Slack refused on purpose is not retried; a post is retried only when Slack
cannot have posted it. Time is simulated: no real waiting."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack_retry import TransientSlackErrors
from slacksim.server import SlackSim
from tests.support.metrics import sample


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.pauses: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds


@pytest.fixture
def sim() -> Iterator[SlackSim]:
    with SlackSim() as running:
        yield running


def _client(sim: SlackSim, time: FakeTime, budget: float = 120.0) -> WebClient:
    handler = TransientSlackErrors(budget, clock=lambda: time.now, sleep=time.sleep)
    return WebClient(token=sim.token, base_url=sim.api_url, retry_handlers=[handler])


def test_a_while_of_429s_and_5xx_is_waited_out_honouring_retry_after(sim):
    time = FakeTime()
    ts = WebClient(token=sim.token, base_url=sim.api_url).chat_postMessage(channel="C1", text="-")
    sim.faults.add("chat.update", status=429, retry_after=7, times=2)
    sim.faults.add("chat.update", status=500, times=6)  # the SDK's own handler stops at 3
    _client(sim, time).chat_update(channel="C1", ts=ts["ts"], text="hello")
    assert [c.status for c in sim.calls_to("chat.update")] == [429] * 2 + [500] * 6 + [200]
    assert all(7 <= p < 7.5 for p in time.pauses[:2])  # Retry-After, plus a little jitter
    assert all(p <= 8 for p in time.pauses[2:]) and time.pauses[3] < time.pauses[6]  # backoff
    assert sample("joinops_slack_api_errors_total", method="chat.update") == 8  # this test's


def test_a_post_is_retried_after_a_429_not_after_a_server_error(sim):
    time = FakeTime()
    sim.faults.add("chat.postMessage", status=429, retry_after=3, times=2)
    _client(sim, time).chat_postMessage(channel="C1", text="once")
    sim.faults.add("chat.postMessage", status=500)  # Slack may have posted before failing
    with pytest.raises(SlackApiError):
        _client(sim, time).chat_postMessage(channel="C1", text="maybe")
    assert [c.status for c in sim.calls_to("chat.postMessage")] == [429, 429, 200, 500]
    assert len(time.pauses) == 2


def test_a_post_answered_too_slowly_is_not_posted_again(sim):
    """Slack posted it but answered after the client's timeout: a second try would post twice."""
    sim.faults.add("chat.postMessage", latency=1.0)
    time = FakeTime()
    handler = TransientSlackErrors(clock=lambda: time.now, sleep=time.sleep)
    client = WebClient(token=sim.token, base_url=sim.api_url, timeout=0.2, retry_handlers=[handler])
    with pytest.raises(TimeoutError):
        client.chat_postMessage(channel="C1", text="slow")
    sim.wait_for(lambda: sim.messages("C1"))
    assert [m["text"] for m in sim.messages("C1").values()] == ["slow"] and time.pauses == []


def test_a_post_whose_connection_was_refused_is_tried_again():
    """Nothing was sent: Slack is started on the port while the client waits to try again."""
    with SlackSim() as probe:
        port = int(probe.url.rsplit(":", 1)[1])
    started: list[SlackSim] = []
    time = FakeTime()

    def start_slack(seconds: float) -> None:
        time.sleep(seconds)
        if not started:
            started.append(SlackSim(port=port).start())

    handler = TransientSlackErrors(clock=lambda: time.now, sleep=start_slack)
    client = WebClient(
        base_url=f"http://127.0.0.1:{port}/api/", token="xoxb-test", retry_handlers=[handler]
    )
    try:
        client.chat_postMessage(channel="C1", text="after all")
        assert [m["text"] for m in started[0].messages("C1").values()] == ["after all"]
        assert len(time.pauses) == 1
    finally:
        for running in started:
            running.stop()


def test_an_outage_longer_than_the_budget_ends_in_the_error(sim):
    time = FakeTime()
    sim.faults.add("chat.update", status=503, times=None)
    with pytest.raises(SlackApiError) as caught:
        _client(sim, time, budget=30).chat_update(channel="C1", ts="1.2", text="x")
    assert caught.value.response.status_code == 503
    assert 20 < time.now <= 30  # it kept trying, and stopped within its bound


def test_what_slack_refuses_on_purpose_is_not_retried(sim):
    time = FakeTime()
    sim.faults.add("chat.postMessage", error="channel_not_found", times=None)
    with pytest.raises(SlackApiError):
        _client(sim, time).chat_postMessage(channel="C1", text="x")
    assert len(sim.calls_to("chat.postMessage")) == 1 and time.pauses == []
