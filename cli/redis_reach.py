"""Whether Redis answers, and if not, which Redis and why: host and port only (a URL may hold a
password), and the failure in words. Light on purpose: `joinops health` runs it often."""

from __future__ import annotations

import urllib.parse

import redis

from cli import texts

PING_SECONDS = 2.0  # a Redis that does not answer a PING in this long is down for a command


def ping(url: str, seconds: float = PING_SECONDS) -> None:
    """One PING with a short timeout; raises redis-py's error when Redis does not answer."""
    client = redis.Redis.from_url(url, socket_connect_timeout=seconds, socket_timeout=seconds)
    try:
        client.ping()
    finally:
        client.close()


def where(url: str) -> str:
    """`host:port` (or a socket's path) of a Redis URL, never its user or password."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "unix":
        return parsed.path
    return f"{parsed.hostname or 'localhost'}:{parsed.port or 6379}"


def reason(error: BaseException) -> str:
    """redis-py's message without its own "Error 111 connecting to host:port." preamble."""
    said = str(error).split(". ", 1)[-1].strip().rstrip(".")
    return said or type(error).__name__


def unreachable(url: str, error: BaseException) -> str:
    return texts.redis_unreachable(where(url), reason(error))
