"""One holder at a time across the bot's replicas: a Redis lease, and the parts only its holder
runs (the relay, the arrivals watcher: bot/post_ack_process.py).

`Lease`: a key holding its owner's name, with a time to live. Taken when free (`SET NX PX`),
kept by renewing it (a script extends it only for its owner), given back on stop (deleted only by
its owner). A holder that cannot renew it in time — Redis away, the process paused longer than
the lease — has lost it, and stops its parts as soon as it notices; the next holder takes the key
once it has expired.

`Leader`: a thread that tries to take the lease every `ttl / 3` seconds, starts the parts once
it has it, renews it while they run, and stops them when a renewal fails. `stop()` stops the
parts first, then gives the lease back: another replica takes over within `ttl / 3` seconds,
not `ttl`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Protocol

import redis

log = logging.getLogger(__name__)

TTL = 10.0  # seconds a lease outlives its holder's last renewal

# KEYS: the lease. ARGV: owner, ttl in ms. Extends it when `owner` holds it; 1 if so.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
# KEYS: the lease. ARGV: owner. Deletes it when `owner` holds it.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class Lease:
    def __init__(self, client: redis.Redis, key: str, owner: str, ttl: float = TTL) -> None:
        self.client, self.key, self.owner = client, key, owner
        self.ttl_ms = max(int(ttl * 1000), 1)
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)

    def acquire(self) -> bool:
        """Take the lease if it is free (or ours already)."""
        if self.client.set(self.key, self.owner, nx=True, px=self.ttl_ms):
            return True
        return self.renew()

    def renew(self) -> bool:
        """Extend the lease if it is still ours; False when it was lost."""
        return bool(self._renew(keys=[self.key], args=[self.owner, self.ttl_ms]))

    def release(self) -> None:
        self._release(keys=[self.key], args=[self.owner])

    def holder(self) -> str | None:
        found = self.client.get(self.key)
        return found.decode() if isinstance(found, bytes) else found


class Part(Protocol):
    def stop(self) -> None: ...


class Leader:
    """Runs `parts` (each made by its factory, already started) while holding `lease`."""

    def __init__(self, lease: Lease, parts: Sequence[Callable[[], Part]], name: str) -> None:
        self.lease = lease
        self.factories = list(parts)
        self.name = name  # what the log calls the parts
        self.every = lease.ttl_ms / 3000
        self.running: list[Part] = []
        self.changed = threading.Condition()  # notified when the lease is taken or given up
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="joinops-leader", daemon=True)

    @property
    def leading(self) -> bool:
        return bool(self.running)

    def start(self) -> Leader:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the parts, then give the lease back (another replica takes over at once)."""
        self._stop.set()
        self._thread.join()
        self._step_down("stopping")
        try:
            self.lease.release()
        except redis.RedisError as e:  # it expires by itself
            log.warning("%s: could not give the lease back: %s", self.name, e)

    def wait_leading(self, leading: bool, timeout: float) -> bool:
        """Until this replica leads (or, with False, does not); False at `timeout`."""
        with self.changed:
            return self.changed.wait_for(lambda: self.leading is leading, timeout)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                if self.running and not self.lease.renew():
                    self._step_down("lease lost")
                elif not self.running and self.lease.acquire():
                    self._take_over()
            except redis.RedisError as e:
                if self.running:
                    self._step_down(f"the state store is unreachable: {e}")
            except Exception:  # the next round tries again; the thread must not end
                log.exception("%s: taking or keeping the lease failed", self.name)
            self._stop.wait(self.every)

    def _take_over(self) -> None:
        log.info("%s: this replica runs them now (%s)", self.name, self.lease.owner)
        started: list[Part] = []
        try:
            for make in self.factories:
                started.append(make())
        except Exception:
            self.running = started
            self._step_down("a part did not start")
            self.lease.release()
            raise
        with self.changed:
            self.running = started
            self.changed.notify_all()

    def _step_down(self, why: str) -> None:
        parts, self.running = self.running, []
        if not parts:
            return
        log.info("%s: stopped on this replica (%s)", self.name, why)
        for part in reversed(parts):
            try:
                part.stop()
            except Exception:
                log.exception("%s: a part did not stop cleanly", self.name)
        with self.changed:
            self.changed.notify_all()
