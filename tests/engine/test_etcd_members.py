"""Control-plane moves judged by etcd's own member list (issue 31, items 1-3): a member that
`kubeadm reset` left behind is removed after the move and said so; a dead member refuses the next
move right before the agent; a target with an external etcd is joined without a stacked member."""

from __future__ import annotations

from joinops.requests.asks import MigrationAsk
from joinops.requests.events import EventKind
from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from joinops.rules.check import check
from kubesim import NodeSpec
from tests.support.engine import approved_request
from workers.runner import run_request


def thread(ctx, request) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(e.text for e in ctx.reporter.history(request.id))


def test_a_member_the_reset_left_behind_is_removed_and_the_thread_says_so(world, make_ctx):
    a = world.cluster("clusterA")
    world.host("a-cp-3").admin_conf_expired = True  # reset cannot read kubeadm-config
    member = a.etcd.named("a-cp-3")
    assert member is not None
    ctx = make_ctx()
    request = approved_request(ctx, "a-cp-3", "clusterA", "clusterB", Role.CONTROL_PLANE)
    assert run_request(ctx, request.id) is State.SUCCEEDED, ctx.store.get(request.id).outcome
    left = [e for e in world.events if e.kind == "etcd-member-left" and e.subject == "a-cp-3"]
    assert left and "Unable to fetch the kubeadm-config ConfigMap" in left[0].message
    assert [m.name for m in a.etcd.members] == ["a-cp-1", "a-cp-2"]
    text = thread(ctx, request)
    assert "`kubeadm reset` on `a-cp-3` left its etcd member a-cp-3" in text
    assert f"joinops removed it (`etcdctl member remove {member.id:x}`)" in text
    # the next move out of clusterA is judged by two healthy members: 2 -> 1 is refused
    ask = MigrationAsk("a-cp-2", "clusterA", "clusterB", Role.CONTROL_PLANE)
    verdict = check(ask, ctx.clusters.get("clusterA"), ctx.clusters.get("clusterB"))
    assert [f.code for f in verdict.findings if f.severity.name == "REFUSAL"] == ["etcd-two-to-one"]


def test_a_member_left_dead_since_the_request_stops_the_move_before_the_agent(world, make_ctx):
    a = world.cluster("clusterA")
    stale: list = []

    def member_dies(event) -> None:  # type: ignore[no-untyped-def]
        if event.kind is EventKind.STEP_STARTED and event.step == "agent":
            with world.lock:  # an earlier reset's member, its host gone: no Node backs it
                stale.append(a.etcd.add("old-cp", "10.250.0.9", healthy=False))

    ctx = make_ctx(hooks=[member_dies])
    request = approved_request(ctx, "a-cp-3", "clusterA", "clusterB", Role.CONTROL_PLANE)
    assert run_request(ctx, request.id) is State.FAILED
    final = ctx.store.get(request.id)
    assert final.failed_step == "agent"
    assert f"member old-cp ({stale[0].id:x}, https://10.250.0.9:2380)" in final.outcome
    assert f"member remove {stale[0].id:x}`" in final.outcome
    assert world.host("a-cp-3").cluster == "clusterA"  # nothing was done to the node
    assert not a.node("a-cp-3")["spec"].get("unschedulable")


def test_a_control_plane_joins_a_target_with_an_external_etcd(world, make_ctx):
    ext = world.add_cluster(
        "clusterE",
        version="v1.32.2",
        control_plane_endpoint="cp.e.test:6443",
        nodes=[NodeSpec("e-cp-1", role="control-plane")],
        external_etcd=True,
    )
    ctx = make_ctx()
    request = approved_request(ctx, "a-cp-3", "clusterA", "clusterE", Role.CONTROL_PLANE)
    assert run_request(ctx, request.id) is State.SUCCEEDED, ctx.store.get(request.id).outcome
    assert world.host("a-cp-3").cluster == "clusterE"
    assert ext.uploaded_external_etcd_certs  # upload-certs ran with the cluster's config
    assert ext.pod("kube-system", "etcd-a-cp-3") is None
    assert ext.pod("kube-system", "kube-apiserver-a-cp-3") is not None
    assert ext.etcd.members == []


def test_a_stacked_target_has_the_joined_node_as_a_voting_member(world, make_ctx):
    b = world.cluster("clusterB")
    ctx = make_ctx()
    request = approved_request(ctx, "a-cp-3", "clusterA", "clusterB", Role.CONTROL_PLANE)
    assert run_request(ctx, request.id) is State.SUCCEEDED, ctx.store.get(request.id).outcome
    joined = b.etcd.named("a-cp-3")
    assert joined is not None and joined.started and not joined.learner
    assert "a-cp-3" not in [m.name for m in world.cluster("clusterA").etcd.members]
