"""The etcd quorum guard and kubeadm's version rule for control-plane moves (issue 14)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from joinops.requests.asks import MigrationAsk
from joinops.requests.model import Role
from joinops.rules.check import check
from kubesim import NodeSpec, World
from kubesim.behaviours import static_pods
from tests.support.clusters import registry_for


@pytest.fixture
def world() -> Iterator[World]:
    with World() as w:
        w.add_cluster(
            "src",
            version="v1.31.4",
            control_plane_endpoint="cp.src.test:6443",
            nodes=[
                NodeSpec("s-cp-1", role="control-plane"),
                NodeSpec("s-cp-2", role="control-plane"),
                NodeSpec("s-cp-3", role="control-plane"),
                NodeSpec("s-w-1"),
            ],
        )
        w.add_cluster(
            "duo",
            version="v1.31.4",
            control_plane_endpoint="cp.duo.test:6443",
            nodes=[
                NodeSpec("d-cp-1", role="control-plane"),
                NodeSpec("d-cp-2", role="control-plane"),
            ],
        )
        w.add_cluster(
            "dst",
            version="v1.32.2",
            control_plane_endpoint="cp.dst.test:6443",
            nodes=[NodeSpec("t-cp-1", role="control-plane")],
        )
        yield w


def verdict_for(world, tmp_path, node="s-cp-1", source="src", role=Role.CONTROL_PLANE, force=False):
    registry = registry_for(world, tmp_path)
    ask = MigrationAsk(node, source, "dst", role, force)
    return check(ask, registry.get(source), registry.get("dst"))


def refusal_texts(verdict) -> str:
    return " ".join(f.text for f in verdict.findings if f.severity.name == "REFUSAL")


def test_a_notready_control_plane_refuses_the_move_naming_it_until_it_is_ready(world, tmp_path):
    src = world.cluster("src")
    src.stop_kubelet("s-cp-3")
    verdict = verdict_for(world, tmp_path)
    assert not verdict.allowed
    assert [f.code for f in verdict.findings if f.severity.name == "REFUSAL"] == ["etcd-quorum"]
    text = refusal_texts(verdict)
    assert "`s-cp-3` (node NotReady)" in text
    assert "`kube-system/etcd-s-cp-3` (not Ready)" in text
    assert "s-cp-2" not in text

    src.start_kubelet("s-cp-3")
    assert verdict_for(world, tmp_path).allowed


def test_an_etcd_pod_not_ready_on_a_ready_control_plane_refuses(world, tmp_path):
    src = world.cluster("src")
    static_pods.set_ready(src, "s-cp-2", False, "etcd")
    text = refusal_texts(verdict_for(world, tmp_path))
    assert "`kube-system/etcd-s-cp-2` (not Ready)" in text
    assert "kube-apiserver-s-cp-2" not in text


def test_a_missing_etcd_mirror_pod_refuses(world, tmp_path):
    src = world.cluster("src")
    src.delete_pod("kube-system", "etcd-s-cp-2", grace=0)
    assert "`kube-system/etcd-s-cp-2` (no such mirror pod)" in refusal_texts(
        verdict_for(world, tmp_path)
    )


def test_a_worker_move_does_not_look_at_control_planes(world, tmp_path):
    world.cluster("src").stop_kubelet("s-cp-3")
    assert verdict_for(world, tmp_path, node="s-w-1", role=Role.WORKER).allowed


def test_control_plane_pods_that_cannot_be_listed_refuse_naming_verb_and_resource(world, tmp_path):
    world.cluster("src").rbac.deny("list", "pods", namespace="kube-system")
    verdict = verdict_for(world, tmp_path)
    assert not verdict.allowed
    assert "the credentials for src may not list pods" in refusal_texts(verdict)


def test_two_to_one_members_is_refused_unless_forced(world, tmp_path):
    """etcd's docs call removing a member from a two-member cluster unsafe."""
    verdict = verdict_for(world, tmp_path, node="d-cp-1", source="duo")
    assert not verdict.allowed
    refusal = next(f for f in verdict.findings if f.code == "etcd-two-to-one")
    assert refusal.severity.name == "REFUSAL"
    assert "from two members to one, which etcd's documentation calls unsafe" in refusal.text
    assert "the word `force`" in refusal.text  # and what force means
    assert "delete pods no controller recreates" in refusal.text

    forced = verdict_for(world, tmp_path, node="d-cp-1", source="duo", force=True)
    assert forced.allowed
    warning = next(f for f in forced.findings if f.code == "etcd-two-to-one")
    assert warning.severity.name == "WARNING"
    assert warning.text.startswith("Forced: moving `d-cp-1` takes duo's etcd from two")


def test_a_control_plane_one_minor_behind_is_allowed_with_kubeadms_warning(world, tmp_path):
    verdict = verdict_for(world, tmp_path, node="s-cp-1")  # v1.31.4 into v1.32.2
    assert verdict.allowed
    warning = next(f for f in verdict.findings if f.code == "kubeadm-minor-behind")
    assert "consider upgrading `s-cp-1` to v1.32 first" in warning.text
    worker = verdict_for(world, tmp_path, node="s-w-1", role=Role.WORKER)
    assert "kubeadm-minor-behind" not in [f.code for f in worker.findings]


def test_a_dead_member_no_node_backs_refuses_with_the_command_to_remove_it(world, tmp_path):
    """etcd counts members, not Nodes: a member a reset left behind (its Node deleted since)."""
    stale = world.cluster("src").etcd.add("s-cp-0", "10.250.0.9", healthy=False)
    verdict = verdict_for(world, tmp_path)
    assert [f.code for f in verdict.findings if f.severity.name == "REFUSAL"] == ["etcd-members"]
    text = refusal_texts(verdict)
    assert f"member s-cp-0 ({stale.id:x}, https://10.250.0.9:2380) runs on no control-plane" in text
    assert f"--endpoints=https://127.0.0.1:2379 member remove {stale.id:x}`" in text

    with world.lock:
        world.cluster("src").etcd.remove(stale.id)
    assert verdict_for(world, tmp_path).allowed


def test_an_unreadable_member_list_refuses_naming_what_could_not_be_read(world, tmp_path):
    world.cluster("src").rbac.deny("create", "pods", namespace="joinops-system")
    verdict = verdict_for(world, tmp_path)
    assert [f.code for f in verdict.findings if f.severity.name == "REFUSAL"] == [
        "etcd-members-unreadable"
    ]
    text = refusal_texts(verdict)
    assert "could not read src's etcd member list (the etcdctl pod on `s-cp-2`" in text
    assert "may not create pods" in text
