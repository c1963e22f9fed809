"""Fixtures for the bot's tests: a simulated world and Slack, and `make_bot` (see harness.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kubesim import NodeSpec, World
from slacksim.server import SlackSim
from slacksim.tiers import Tiers
from tests.bot.harness import GROUP, GROUP_MEMBER, SLACK_SPEED, BotHarness
from tests.support.clusters import add_standard_clusters


@pytest.fixture
def world() -> Iterator[World]:
    """The standard clusters, a node name taken in both clusterA and clusterB, and a cluster
    built without a controlPlaneEndpoint."""
    with World(pod_grace_seconds=0.05, join_seconds=0.1) as w:
        add_standard_clusters(w)
        w.cluster("clusterA").add_node(NodeSpec("taken"))
        w.cluster("clusterB").add_node(NodeSpec("taken"))
        w.add_cluster(
            "bare", version="v1.32.2", nodes=[NodeSpec("bare-cp-1", role="control-plane")]
        )
        yield w


@pytest.fixture
def sim() -> Iterator[SlackSim]:
    with SlackSim(tiers=Tiers(SLACK_SPEED)) as running:
        running.usergroups[GROUP] = [GROUP_MEMBER]
        yield running


@pytest.fixture
def make_bot(world, sim, redis_client, redis_url, tmp_path):  # type: ignore[no-untyped-def]
    made: list[BotHarness] = []

    def make(
        clock: Callable[[], float] = time.time, check_worker: bool = True, **overrides: Any
    ) -> BotHarness:
        harness = BotHarness(world, sim, redis_url, tmp_path, overrides, clock, check_worker)
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.stop()


@pytest.fixture
def bot(make_bot) -> BotHarness:  # type: ignore[no-untyped-def]
    return make_bot()
