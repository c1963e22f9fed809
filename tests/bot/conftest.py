"""Fixtures for the bot's tests: a simulated world and Slack, and `make_bot` (see harness.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kubesim import NodeSpec, World
from slacksim.server import SlackSim
from tests.bot.harness import GROUP, GROUP_MEMBER, BotHarness


@pytest.fixture
def world() -> Iterator[World]:
    with World(pod_grace_seconds=0.05, join_seconds=0.1) as w:
        w.add_cluster(
            "clusterA",
            version="v1.31.4",
            control_plane_endpoint="cp.a.test:6443",
            nodes=[
                NodeSpec("a-cp-1", role="control-plane"),
                NodeSpec("a-cp-2", role="control-plane"),
                NodeSpec("a-cp-3", role="control-plane"),
                NodeSpec("a-w-1"),
                NodeSpec("a-w-2"),
                NodeSpec("taken"),
            ],
        )
        w.add_cluster(
            "clusterB",
            version="v1.32.2",
            control_plane_endpoint="cp.b.test:6443",
            nodes=[NodeSpec("b-cp-1", role="control-plane"), NodeSpec("b-w-1"), NodeSpec("taken")],
        )
        w.add_cluster(
            "host-1",
            version="v1.32.0",
            control_plane_endpoint="h1.test:6443",
            nodes=[NodeSpec("node-1", role="control-plane")],
        )
        w.add_cluster(
            "bare", version="v1.32.2", nodes=[NodeSpec("bare-cp-1", role="control-plane")]
        )
        yield w


@pytest.fixture
def sim() -> Iterator[SlackSim]:
    with SlackSim() as running:
        running.usergroups[GROUP] = [GROUP_MEMBER]
        yield running


@pytest.fixture
def make_bot(world, sim, redis_client, redis_url, tmp_path):  # type: ignore[no-untyped-def]
    made: list[BotHarness] = []

    def make(clock: Callable[[], float] = time.time, **overrides: Any) -> BotHarness:
        harness = BotHarness(world, sim, redis_url, tmp_path, overrides, clock)
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.stop()


@pytest.fixture
def bot(make_bot) -> BotHarness:  # type: ignore[no-untyped-def]
    return make_bot()
