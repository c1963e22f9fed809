"""`all from A to B` keeps B's etcd odd and at most seven members (issue 31, item 2).

etcd's FAQ: an even member count tolerates no more failures than the odd count below it, and
more than seven members slow every write (each waits for a majority). kubesim's kubeadm control
planes each run one stacked etcd member, so B's member count is its control-plane count; the
batch turns only as many of A's control planes into B's as keep that count odd and at most seven,
and the rest join as workers, each saying why in the plan.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from joinops.requests.model import Role
from joinops.rules import batch as batches
from kubesim import NodeSpec, World
from tests.stitching.test_stitching import run_batch, setup  # noqa: F401 (a fixture)

CONTROL_PLANE = "node-role.kubernetes.io/control-plane"


@pytest.fixture
def world() -> Iterator[World]:
    with World(pod_grace_seconds=0.05, join_seconds=0.1) as w:
        w.add_cluster(
            "three",
            version="v1.32.2",
            control_plane_endpoint="cp.three.test:6443",
            nodes=[NodeSpec(f"b-cp-{i}", role="control-plane") for i in (1, 2, 3)],
        )
        w.add_cluster(
            "seven",
            version="v1.32.2",
            control_plane_endpoint="cp.seven.test:6443",
            nodes=[NodeSpec(f"v-cp-{i}", role="control-plane") for i in range(1, 8)],
        )
        w.add_cluster(
            "source",
            version="v1.32.2",
            control_plane_endpoint="cp.source.test:6443",
            nodes=[
                *(NodeSpec(f"s-cp-{i}", role="control-plane") for i in (1, 2, 3)),
                NodeSpec("s-w-1"),
            ],
        )
        yield w


def test_all_into_a_three_member_target_keeps_it_odd_and_at_most_seven(world, setup):  # noqa: F811
    ctx = setup(max_parallel=4)
    plan = batches.plan_all("source", "three", ctx.clusters)
    roles = {i.ask.node: i.ask.role for i in plan.items}
    assert roles == {
        "s-cp-1": Role.CONTROL_PLANE,
        "s-cp-2": Role.CONTROL_PLANE,
        "s-cp-3": Role.WORKER,  # a sixth member would make it even
        "s-w-1": Role.WORKER,
    }
    said = [f.text for i in plan.items if i.ask.node == "s-cp-3" for f in i.verdict.findings]
    assert any("joins three as a worker" in text for text in said)
    assert "s-cp-3: WARNING: `s-cp-3` joins three as a worker" in batches.render(plan)

    # on the way, source's etcd goes from two members to one: only when forced
    assert not plan.allowed
    assert "takes its etcd from two members to one on the way" in batches.render(plan)
    plan = batches.plan_all("source", "three", ctx.clusters, force=True)
    assert plan.allowed, batches.render(plan)

    _, final, _ = run_batch(ctx, plan)
    assert final.state == "succeeded", final.text
    three = world.cluster("three")
    members = three.control_plane_nodes()
    assert len(members) == 5 and len(members) % 2 == 1
    assert CONTROL_PLANE not in three.node("s-cp-3")["metadata"]["labels"]


def test_into_a_seven_member_target_every_control_plane_joins_as_a_worker(world, setup):  # noqa: F811
    ctx = setup(max_parallel=4)
    plan = batches.plan_all("source", "seven", ctx.clusters, force=True)  # source: 3 -> 0
    assert plan.allowed, batches.render(plan)
    assert {i.ask.role for i in plan.items} == {Role.WORKER}


def test_a_single_move_past_seven_members_is_warned(world, setup):  # noqa: F811
    ctx = setup(max_parallel=4)
    plan = batches.plan_nodes(["s-cp-1"], "source", "seven", Role.CONTROL_PLANE, ctx.clusters)
    codes = {f.code: f.text for f in plan.items[0].verdict.findings}
    assert "seven will have 8 etcd members" in codes["etcd-size"]
