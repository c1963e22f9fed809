"""`joinops migrate … --for DURATION` and `joinops loans`, with a real worker."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from cli import main
from kubesim import NodeSpec, World
from tests.support.clusters import write_config
from tests.support.engine import start_worker, stop_worker, wait_event
from workers.context import EngineContext

POLICY = {"min_loan": "1s", "max_loan": "2d"}


@pytest.fixture
def world() -> Iterator[World]:
    """Both clusters on one version, so that a node may go back as it came."""
    with World(pod_grace_seconds=0.05, join_seconds=0.1) as w:
        for name, endpoint in (("clusterA", "cp.a.test:6443"), ("clusterB", "cp.b.test:6443")):
            w.add_cluster(
                name,
                version="v1.31.4",
                control_plane_endpoint=endpoint,
                nodes=[NodeSpec(f"{name[-1].lower()}-cp-1", role="control-plane")],
            )
        w.cluster("clusterA").add_node(NodeSpec("a-w-1"))
        w.cluster("clusterA").add_node(NodeSpec("a-w-2"))
        yield w


@pytest.fixture
def worker(world, tmp_path, redis_client, redis_url, monkeypatch):  # type: ignore[no-untyped-def]
    config = write_config(world, tmp_path, policy=POLICY)
    monkeypatch.setenv("JOINOPS_CONFIG", str(config))
    monkeypatch.setenv("REDIS_URL", redis_url)
    process = start_worker(config, redis_url, tmp_path / "worker.log")
    yield process
    stop_worker(process)


def _migrate(*words: str) -> int:
    return main(["migrate", *words, "--yes"])


def test_a_loan_at_the_terminal_is_listed_then_comes_back(world, worker, make_ctx, capsys):
    ctx: EngineContext = make_ctx(policy=POLICY)
    assert _migrate("a-w-1", "--from", "clusterA", "--to", "clusterB", "--for", "1d") == 0
    out = capsys.readouterr().out
    assert "Lent for 1 day: a-w-1 moves back to clusterA when that is up" in out
    request = ctx.store.recent(1)[0]
    wait_event(ctx, request.id, lambda e: e.kind == "loan" and e.state == "lent")

    assert main(["status", request.id]) == 0
    assert "  loan: active, back to clusterA at " in capsys.readouterr().out
    assert main(["loans"]) == 0
    listed = capsys.readouterr().out
    assert f"{request.id}  a-w-1  clusterA -> clusterB  active" in listed
    assert main(["loans", "--json"]) == 0
    (loan,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert loan["state"] == "active" and loan["due_at"] - loan["lent_at"] == 86400

    assert _migrate("a-w-2", "--from", "clusterA", "--to", "clusterB", "--for", "2s") == 0
    assert "Lent for 2 s: a-w-2 moves back to clusterA" in capsys.readouterr().out
    short = ctx.store.recent(1)[0]
    wait_event(ctx, short.id, lambda e: e.kind == "loan" and e.state == "returned", 60)
    assert world.cluster("clusterA").node("a-w-2") is not None
    assert world.cluster("clusterB").node("a-w-2") is None
    assert main(["audit", "--json"]) == 0
    trail = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    about = [e["action"] for e in trail if e["request_id"] == short.id]
    for action in ("lent", "reminded", "returning", "returned"):
        assert about.count(action) == 1, about
    assert main(["loans"]) == 0
    assert short.id not in capsys.readouterr().out


def test_a_batch_at_the_terminal_lends_and_returns_each_node(world, worker, make_ctx, capsys):
    ctx: EngineContext = make_ctx(policy=POLICY)
    assert _migrate("a-w-1", "a-w-2", "--from", "clusterA", "--to", "clusterB", "--for", "2s") == 0
    batch = next(r for r in ctx.store.recent(5) if r.kind == "batch")
    for child_id in batch.extra["children"].split(","):
        wait_event(ctx, child_id, lambda e: e.kind == "loan" and e.state == "returned", 60)
    for node in ("a-w-1", "a-w-2"):
        assert world.cluster("clusterA").node(node) is not None
        assert world.cluster("clusterB").node(node) is None


@pytest.mark.parametrize(
    ("duration", "said"),
    [
        ("8x", "'8x' is not a loan duration: give a number and a unit s, m, h or d"),
        ("3d", "A loan of 3 days is not allowed: a loan lasts from 1 s to 2 days."),
    ],
)
def test_a_loan_outside_the_range_exits_2_with_the_range(world, worker, capsys, duration, said):
    assert _migrate("a-w-1", "--from", "clusterA", "--to", "clusterB", "--for", duration) == 2
    err = capsys.readouterr().err
    assert said in err and "a loan lasts from 1 s to 2 days" in err
    assert world.cluster("clusterA").node("a-w-1") is not None


def test_with_returns_needing_approval_a_loan_is_asked_in_slack(
    world, tmp_path, capsys, monkeypatch
):
    config = write_config(world, tmp_path, policy={**POLICY, "loan_returns_need_approval": True})
    monkeypatch.setenv("JOINOPS_CONFIG", str(config))
    assert _migrate("a-w-1", "--from", "clusterA", "--to", "clusterB", "--for", "1h") == 2
    assert "a loan's return waits for an approver's click" in capsys.readouterr().err
    assert world.cluster("clusterA").node("a-w-1") is not None


def test_no_loans_says_so(world, worker, capsys):
    assert main(["loans"]) == 0
    assert capsys.readouterr().out.strip() == "No node is lent at the moment."
