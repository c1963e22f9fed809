"""The sandbox's Redis: a `redis-server` of its own, in DIR/redis on a free loopback port, started
empty for each run and stopped with the sandbox; or a database the user names with
`--redis-url`, used as it is (never flushed).

`--keep-state` starts the sandbox's own Redis on what the last run left (its append-only file in
DIR/redis): requests, audit, arrivals seen. REDIS_URL is not a way to name one: it is what a
real bot and worker read, and a shell that exports it for them must not get the sandbox's
simulated requests mixed into real ones.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import redis

from cli import sandbox_texts
from joinops.errors import ConfigError
from joinops.private_redis import PrivateRedis, RedisServerMissing
from joinops.redact import redacted_url

DATA_DIR = "redis"


@dataclass(frozen=True)
class SandboxRedis:
    url: str
    own: bool  # started by the sandbox (else named with --redis-url)
    kept: bool  # starts on what an earlier run left

    @property
    def shown(self) -> str:
        """The URL as it may be printed: no password."""
        return redacted_url(self.url)


@contextmanager
def sandbox_redis(directory: Path, named: str | None, keep_state: bool) -> Iterator[SandboxRedis]:
    """The Redis for this run, answering; the sandbox's own is stopped on the way out."""
    if named:
        _check_answers(named)
        yield SandboxRedis(named, own=False, kept=True)
        return
    data = directory / DATA_DIR
    if not keep_state:
        shutil.rmtree(data, ignore_errors=True)
    try:
        server = PrivateRedis(data, durable=True, ends_with_parent=True)
    except RedisServerMissing:
        raise ConfigError([sandbox_texts.redis_server_missing()]) from None
    try:
        try:
            server.start()
        except RuntimeError:
            raise ConfigError([sandbox_texts.redis_server_failed(data / "redis.log")]) from None
        yield SandboxRedis(server.url, own=True, kept=keep_state)
    finally:
        server.stop()


def _check_answers(url: str) -> None:
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
        try:
            client.ping()
        finally:
            client.close()
    except (redis.RedisError, ValueError) as e:
        why = str(e).replace(url, redacted_url(url)) or type(e).__name__
        raise ConfigError([sandbox_texts.named_redis_silent(redacted_url(url), why)]) from None
