"""The HTTP side: signatures, stale timestamps, Slack's redeliveries, malformed bodies, probes,
and acks under a burst."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from slacksim.signing import deliver, payload_body, slash_command_body
from tests.bot.harness import SECRET, ack_text


def _nothing_happened(bot) -> None:  # type: ignore[no-untyped-def]
    assert bot.sim.calls_to("chat.postMessage") == []
    assert bot.ctx.store.recent(10) == []
    assert bot.sim.response_urls == {}


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_a_bad_signature_gets_401_and_does_nothing(bot):
    body = slash_command_body(text="a-w-1 from clusterA to clusterB")
    delivery = deliver(bot.events_url, body, "not-the-secret")
    assert delivery.status == 401
    _nothing_happened(bot)


def test_a_stale_timestamp_gets_401_and_does_nothing(bot):
    body = slash_command_body(text="a-w-1 from clusterA to clusterB")
    delivery = deliver(bot.events_url, body, SECRET, timestamp=int(time.time()) - 10 * 60)
    assert delivery.status == 401
    _nothing_happened(bot)


def test_a_slack_redelivery_creates_nothing(bot):
    delivery, _ = bot.slash("a-w-1 from clusterA to clusterB", retry_num=1)
    assert delivery.status == 200 and delivery.body == b""
    assert delivery.headers.get("x-slack-no-retry") == "1"
    _nothing_happened(bot)

    bot.slash("a-w-1 from clusterA to clusterB")  # the first delivery, answered late
    bot.slash("a-w-1 from clusterA to clusterB", retry_num=2)
    bot.request_from_message(bot.wait_message())
    assert len(bot.ctx.store.recent(10)) == 1
    assert len(bot.sim.calls_to("chat.postMessage")) == 1


def test_a_first_delivery_numbered_zero_is_handled(bot):
    """Socket Mode hands bolt `retry_attempt` 0 as `X-Slack-Retry-Num: 0` with a first delivery
    (slack_bolt/adapter/socket_mode/internals.py): it is not a redelivery."""
    delivery, _ = bot.slash("a-w-1 from clusterA to clusterB", retry_num=0)
    assert delivery.headers.get("x-slack-no-retry") is None
    bot.request_from_message(bot.wait_message())
    assert len(bot.ctx.store.recent(10)) == 1


def test_malformed_bodies_get_4xx_never_a_traceback(bot):
    unparsable = b"payload=%7Bnot-json"
    delivery = deliver(bot.events_url, unparsable, SECRET)
    assert delivery.status == 400 and b"Traceback" not in delivery.body
    assert deliver(bot.events_url, unparsable, "wrong").status == 401

    no_actions = payload_body({"type": "block_actions", "user": {"id": "U1"}, "actions": []})
    delivery = deliver(bot.events_url, no_actions, SECRET)
    assert delivery.status == 400 and delivery.body == b"block_actions without actions"

    no_user = slash_command_body(text="help", user_id="")
    assert deliver(bot.events_url, no_user, SECRET).status == 400

    not_ours = payload_body({"type": "something_else", "user": {"id": "U1"}})
    assert deliver(bot.events_url, not_ours, SECRET).status == 404
    _nothing_happened(bot)


def test_healthz_and_other_paths(bot):
    base = bot.server.url
    assert _get(base + "/healthz") == (200, "ok")
    assert _get(base + "/slack/events")[0] == 405
    assert _get(base + "/nothing")[0] == 404
    bot.relay.stop()
    assert _get(base + "/healthz") == (503, "relay stopped")


def test_a_burst_of_commands_is_acked_quickly(bot):
    def ask(i: int) -> tuple[int, float, str]:
        delivery, _ = bot.slash("help", user=f"UBURST{i:04d}")
        return delivery.status, delivery.elapsed, ack_text(delivery)

    with ThreadPoolExecutor(max_workers=25) as pool:
        results = list(pool.map(ask, range(50)))
    assert all(status == 200 for status, _, _ in results)
    assert all("moves Kubernetes nodes between clusters" in text for _, _, text in results)
    slowest = max(elapsed for _, elapsed, _ in results)
    assert slowest < 0.8, slowest  # the stdlib server's backlog of 5 would reset some


def test_the_ack_is_json_bolt_understands(bot):
    delivery, _ = bot.slash("nonsense words here")
    assert delivery.status == 200
    body = json.loads(delivery.body)
    assert body["response_type"] == "ephemeral" and body["blocks"][0]["type"] == "section"


def test_a_body_that_is_not_utf8_gets_400_signed_and_401_unsigned(bot):
    body = b"text=" + bytes([0x80, 0xFF]) + b"&command=%2Fjoin"
    assert deliver(bot.events_url, body, SECRET).status == 400
    assert deliver(bot.events_url, body, "not-the-secret").status == 401
    _nothing_happened(bot)
