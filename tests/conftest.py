"""Shared fixtures: a real Redis (flushed around each test) and test settings files."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import redis

TEST_REDIS_URL = os.environ.get("JOINOPS_TEST_REDIS_URL", "redis://127.0.0.1:6379/9")


@pytest.fixture
def redis_url() -> str:
    return TEST_REDIS_URL


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    yield client
    client.flushdb()
    client.close()
