"""Health in Socket Mode (bot/health.py): /livez follows the link to Slack (down past the grace
is unhealthy, reconnecting within it is not) and the relay thread; Redis is only in /readyz."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from bot.availability import StoreProbe
from bot.health import Health, HealthServer
from tests.bot.harness import until
from tests.bot.served import ServedBot
from tests.support.clusters import write_config

GRACE = 1.0  # seconds; production's is bot.health.GRACE


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


@pytest.fixture
def socket_bot(bot):  # type: ignore[no-untyped-def]
    bot.connect_socket()
    return bot


@pytest.fixture
def health(socket_bot) -> Iterator[HealthServer]:  # type: ignore[no-untyped-def]
    assert socket_bot.socket is not None
    checks = Health(
        relay_alive=lambda: socket_bot.relay.alive,
        store=StoreProbe(socket_bot.redis_url).problem,
        down_for=socket_bot.socket.down_for,
        grace=GRACE,
    )
    server = HealthServer(checks, "127.0.0.1", 0).start()
    yield server
    server.stop()


def test_live_and_ready_while_connected(health):
    assert _get(health.url + "/livez") == (200, "ok")
    assert _get(health.url + "/readyz") == (200, "ok")
    assert _get(health.url + "/other")[0] == 404


def test_a_link_down_past_the_grace_fails_liveness_and_a_reconnect_heals_it(socket_bot, health):
    sim = socket_bot.sim
    refused = sim.faults.add("apps.connections.open", error="internal_error", times=None)
    sim.socket.drop()  # and every reconnect is refused
    _, text = until(lambda: (got := _get(health.url + "/readyz"))[0] == 503 and got, 10)
    assert text == "Socket Mode link down, reconnecting"
    _, text = until(lambda: (got := _get(health.url + "/livez"))[0] == 503 and got, 10)
    assert text.startswith("Socket Mode link down for ") and "more than 1 s" in text
    assert refused.hits >= 1

    sim.faults.clear()
    sim.socket.wait_connected(2, timeout=20)
    until(lambda: _get(health.url + "/livez") == (200, "ok"), 10)
    assert _get(health.url + "/readyz") == (200, "ok")


def test_a_refresh_within_the_grace_keeps_the_bot_live(socket_bot, health):
    socket_bot.sim.socket.disconnect("refresh_requested")
    socket_bot.sim.socket.wait_connected(2)
    assert _get(health.url + "/livez") == (200, "ok")


def test_a_dead_relay_fails_liveness(socket_bot, health):
    socket_bot.relay.stop()
    assert _get(health.url + "/livez") == (503, "relay stopped")
    assert _get(health.url + "/readyz") == (503, "relay stopped")


def test_redis_down_fails_readiness_only(socket_bot):
    assert socket_bot.socket is not None
    nowhere = StoreProbe("redis://127.0.0.1:1/0")  # nothing listens there: Redis is down
    checks = Health(
        relay_alive=lambda: socket_bot.relay.alive,
        store=nowhere.problem,
        down_for=socket_bot.socket.down_for,
        grace=GRACE,
    )
    server = HealthServer(checks, "127.0.0.1", 0).start()
    try:
        assert _get(server.url + "/livez") == (200, "ok")
        status, text = _get(server.url + "/readyz")
        assert status == 503 and text
    finally:
        server.stop()


def test_joinops_serve_in_socket_mode_serves_its_probes(world, sim, redis_url, tmp_path):
    config = write_config(world, tmp_path)
    served = ServedBot(config, sim, redis_url, tmp_path / "bot.log", socket=True)
    try:
        sim.socket.wait_connected(timeout=30)
        until(lambda: _get(served.url + "/readyz") == (200, "ok"), 30)
        assert _get(served.url + "/livez") == (200, "ok")
        envelope = sim.socket.slash_command(text="help")
        assert "moves Kubernetes nodes" in str(sim.socket.wait_ack(envelope)["payload"])
    finally:
        assert served.terminate() == 0
