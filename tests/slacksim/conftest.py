from collections.abc import Iterator

import pytest
from slack_sdk import WebClient

from slacksim import SlackSim


@pytest.fixture
def sim() -> Iterator[SlackSim]:
    with SlackSim() as running:
        yield running


@pytest.fixture
def client(sim: SlackSim) -> WebClient:
    return WebClient(token=sim.token, base_url=sim.api_url, timeout=5)
