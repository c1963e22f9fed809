"""Running the engine against simulated clusters: requests, in-process runs, worker processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from joinops.clusters.registry import ClusterRegistry
from joinops.queue import enqueue_migration
from joinops.requests.asks import MigrationAsk
from joinops.requests.events import Event, RedisEventLog
from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from joinops.requests.store import Request, RequestStore
from joinops.rules.check import check
from workers.context import EngineContext


class RecordingReporter(RedisEventLog):
    """The real event log, plus a list of what was emitted and optional hooks per event."""

    def __init__(self, ctx_redis, hooks=None) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx_redis)
        self.events: list[Event] = []
        self.hooks = hooks or []

    def emit(self, event: Event) -> None:
        super().emit(event)
        self.events.append(event)
        for hook in self.hooks:
            hook(event)


def stored_request(store: RequestStore, **fields: object) -> Request:
    """A request stored as `create` stores it (pending unless `state` says otherwise), for
    tests of the store and of what reads it; only the fields a test cares about are given."""
    defaults: dict[str, object] = {
        "node": "node-7",
        "source": "a",
        "target": "b",
        "role": Role.CONTROL_PLANE,
        "requester": "U1",
    }
    return store.create(Request(id="", **{**defaults, **fields}))  # type: ignore[arg-type]


def approved_request(
    ctx: EngineContext,
    node: str,
    source: str,
    target: str,
    role: Role = Role.WORKER,
    force: bool = False,
) -> Request:
    """What an approval leaves behind: an approved request whose rules were checked."""
    registry: ClusterRegistry = ctx.clusters
    verdict = check(
        MigrationAsk(node, source, target, role, force), registry.get(source), registry.get(target)
    )
    assert verdict.allowed, [f.text for f in verdict.findings]
    return ctx.store.create(
        Request(
            id="",
            node=node,
            source=source,
            target=target,
            role=role,
            state=State.APPROVED,
            requester="UREQUESTER",
            decided_by="UAPPROVER1",
            destroys_source=verdict.destroys_source,
            from_control_plane=bool(verdict.node and verdict.node.is_control_plane),
            force=force,
        )
    )


def start_worker(
    config: Path, redis_url: str, log: Path, extra_args: list[str] | None = None
) -> subprocess.Popen[bytes]:
    """A real `joinops worker` process, in its own process group (so SIGKILL takes it all)."""
    env = {**os.environ, "JOINOPS_CONFIG": str(config), "REDIS_URL": redis_url}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cli",
            "worker",
            "--name",
            f"test-{log.stem}-{uuid.uuid4().hex[:8]}",
            *(extra_args or []),
        ],
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


STOP_SECONDS = 60  # SIGTERM to exit: a warm shutdown ends its job first, on a machine 10x busier


def kill_worker(process: subprocess.Popen[bytes]) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=STOP_SECONDS)


def stop_worker(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            kill_worker(process)


def wait_event(ctx: EngineContext, request_id: str, predicate, timeout: float = 90) -> Event:  # type: ignore[no-untyped-def]
    """Block on the request's event stream until an event matches."""
    deadline = time.monotonic() + timeout
    for event in RedisEventLog(ctx.redis).follow(request_id, block_ms=1000):
        assert time.monotonic() < deadline, f"{request_id}: no matching event in {timeout} s"
        if event is not None and predicate(event):
            return event
    raise AssertionError("unreachable")


def wait_final(ctx: EngineContext, request_id: str, timeout: float = 120) -> Event:
    """Block on the request's event stream until its final state event."""
    return wait_event(ctx, request_id, lambda e: e.is_final, timeout)


__all__ = [
    "approved_request",
    "enqueue_migration",
    "kill_worker",
    "start_worker",
    "stop_worker",
    "wait_event",
    "wait_final",
]
