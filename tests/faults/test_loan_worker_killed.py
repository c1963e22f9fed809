"""A worker killed with SIGKILL while a loan's return is due: another worker returns the node,
once.

Two moments: the only worker dies with the return scheduled (it holds RQ's scheduler lock, so
the next worker's scheduler stays locked out for a minute: the sweep must do it); and the worker
dies in the middle of making the return (the claim is taken, the request not yet made: after the
lease, the next worker makes it). Either way: the node is back home, one return request, one
`returning` and one `returned` in the audit trail, and a late run of the scheduled job does
nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from joinops.loans.lend import lend
from joinops.loans.model import LoanState
from joinops.loans.store import LoanStore
from joinops.queue import enqueue_migration
from joinops.requests.audit import AuditLog
from kubesim import NodeSpec, World
from tests.support.clusters import write_config
from tests.support.engine import (
    approved_request,
    kill_worker,
    start_worker,
    stop_worker,
    wait_event,
)
from tests.support.faults import HeldCall
from workers.loans import start_return

POLICY = {"min_loan": "1s"}
NODE = "a-w-1"


@pytest.fixture
def world() -> Iterator[World]:
    """Both clusters on one version, so that the node may go back as it came."""
    with World(pod_grace_seconds=0.05, join_seconds=0.1) as w:
        w.add_cluster(
            "clusterA",
            version="v1.31.4",
            control_plane_endpoint="cp.a.test:6443",
            nodes=[NodeSpec("a-cp-1", role="control-plane"), NodeSpec(NODE)],
        )
        w.add_cluster(
            "clusterB",
            version="v1.31.4",
            control_plane_endpoint="cp.b.test:6443",
            nodes=[NodeSpec("b-cp-1", role="control-plane"), NodeSpec("b-w-1")],
        )
        yield w
        assert w.internal_errors == []


def _lent(ctx: Any, seconds: float) -> str:
    """A loan of NODE from clusterA to clusterB, its move queued; returns the loan's id."""
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    lend(LoanStore(ctx.redis), ctx.store, request, timedelta(seconds=seconds))
    enqueue_migration(ctx.redis, ctx.settings, request.id)
    wait_event(ctx, request.id, lambda e: e.kind == "loan" and e.state == "lent", 60)
    return request.id


def _returned_once(ctx: Any, world: World, loan_id: str) -> None:
    wait_event(ctx, loan_id, lambda e: e.kind == "loan" and e.state == "returned", 90)
    assert world.cluster("clusterA").node(NODE) is not None
    assert world.cluster("clusterB").node(NODE) is None
    loan = LoanStore(ctx.redis).get(loan_id)
    assert loan is not None and loan.state is LoanState.RETURNED
    returns = [r for r in ctx.store.recent(50) if r.extra.get("return_of") == loan_id]
    assert [r.id for r in returns] == [loan.return_request]
    actions = [str(e.action) for e in AuditLog(ctx.redis).entries() if e.request_id == loan_id]
    assert actions.count("returning") == 1 and actions.count("returned") == 1, actions
    announced = [
        e.state for e in ctx.reporter.history(loan_id) if e.kind == "loan"
    ]  # what the thread would get
    assert announced.count("returning") == 1 and announced.count("returned") == 1, announced
    assert start_return(ctx, loan_id, loan.generation) == "not due"  # the late scheduled job


def _workers(world: World, tmp_path: Path, redis_url: str) -> tuple[Path, Any]:
    config = write_config(world, tmp_path, policy=POLICY)
    return config, start_worker(config, redis_url, tmp_path / "worker-1.log")


def test_the_only_worker_killed_before_the_return_leaves_it_to_the_next(
    world, make_ctx, tmp_path, redis_url
):
    config, first = _workers(world, tmp_path, redis_url)
    second = None
    try:
        ctx = make_ctx(policy=POLICY)
        loan_id = _lent(ctx, seconds=3)
        kill_worker(first)  # with the return scheduled, and RQ's scheduler lock held
        second = start_worker(config, redis_url, tmp_path / "worker-2.log")
        _returned_once(ctx, world, loan_id)
    finally:
        stop_worker(first)
        if second is not None:
            stop_worker(second)


def test_a_worker_killed_while_making_the_return_leaves_it_to_the_next(
    world, make_ctx, tmp_path, redis_url
):
    config, first = _workers(world, tmp_path, redis_url)
    second = None
    try:
        ctx = make_ctx(policy=POLICY)
        loan_id = _lent(ctx, seconds=2)
        # the return's rule check reads the node in the borrower: held there, the worker dies
        held = HeldCall(world.cluster("clusterB"), f"/api/v1/nodes/{NODE}", "GET", 2.0)
        held.wait_held()
        kill_worker(first)
        loan = LoanStore(ctx.redis).get(loan_id)
        assert loan is not None and loan.state is LoanState.RETURNING
        assert ctx.store.get(loan.return_request) is None  # claimed, not made
        second = start_worker(config, redis_url, tmp_path / "worker-2.log")
        _returned_once(ctx, world, loan_id)
    finally:
        stop_worker(first)
        if second is not None:
            stop_worker(second)
