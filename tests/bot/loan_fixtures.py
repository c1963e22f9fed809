"""A module's world, Redis and worker for the loan tests (imported as fixtures by each module).

A module defines `policy` (module scope): the `policy:` of its worker's and its bot's
configuration. One worker serves the whole module, as in tests/bot/test_flows.py: each test
lends nodes of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis

from joinops.loans.model import LoanState
from joinops.loans.store import LoanStore
from joinops.requests.audit import AuditLog
from kubesim import NodeSpec, World
from tests.bot.harness import APPROVER, CHANNEL, REQUESTER, until
from tests.support import session_redis
from tests.support.clusters import write_config
from tests.support.engine import start_worker, stop_worker


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    with World(pod_grace_seconds=0.05, join_seconds=0.1) as w:
        w.add_cluster(
            "clusterA",
            version="v1.31.4",
            control_plane_endpoint="cp.a.test:6443",
            nodes=[
                NodeSpec("a-cp-1", role="control-plane"),
                *(NodeSpec(f"a-w-{i}") for i in range(1, 13)),
            ],
        )
        w.add_cluster(
            "clusterB",
            version="v1.31.4",
            control_plane_endpoint="cp.b.test:6443",
            nodes=[NodeSpec("b-cp-1", role="control-plane"), NodeSpec("b-w-1")],
        )
        yield w


@pytest.fixture
def redis_client(shared_redis: redis.Redis) -> redis.Redis:
    return shared_redis  # not flushed per test: the module's worker keeps its keys


@pytest.fixture(scope="module")
def worker(world, shared_redis, tmp_path_factory, policy):  # type: ignore[no-untyped-def]
    directory = tmp_path_factory.mktemp("worker")
    config = write_config(world, directory, policy=policy)
    process = start_worker(config, session_redis.url(), directory / "worker.log")
    yield process
    stop_worker(process)


@pytest.fixture
def bot(make_bot, worker, policy):  # type: ignore[no-untyped-def]
    return make_bot(policy=policy)


def lend(bot: Any, words: str) -> Any:
    """Ask for a loan, approve it, and wait until the move succeeded and the loan runs (a
    short loan may already be on its way back by then)."""
    bot.slash(words)
    request = bot.request_from_message(bot.wait_message())
    bot.approve(request.id)
    loans = LoanStore(bot.redis)
    until(lambda: (loan := loans.get(request.id)) and loan.state is not LoanState.LENDING, 60)
    bot.wait_thread(request.id, lambda replies: any(":hourglass" in r for r in replies))
    return request


def thread_messages(bot: Any, request_id: str) -> list[dict[str, Any]]:
    return bot.sim.thread(CHANNEL, bot.request(request_id).message_ts)


def loan_actions(bot: Any, request_id: str) -> list[str]:
    """The audit trail's actions about the loan of `request_id` (not the others' clicks)."""
    return [
        str(e.action)
        for e in AuditLog(bot.redis).entries()
        if e.request_id == request_id and e.actor in ("joinops", REQUESTER, APPROVER)
    ]
