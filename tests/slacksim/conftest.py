from collections.abc import Iterator

import pytest
from slack_sdk import WebClient

# Imported from the submodule: tests/conftest.py puts tests/ on sys.path, where this directory
# would otherwise stand in for the slacksim package (a namespace package without SlackSim).
from slacksim.server import SlackSim


@pytest.fixture
def sim() -> Iterator[SlackSim]:
    with SlackSim() as running:
        yield running


@pytest.fixture
def client(sim: SlackSim) -> WebClient:
    return WebClient(token=sim.token, base_url=sim.api_url, timeout=5)
