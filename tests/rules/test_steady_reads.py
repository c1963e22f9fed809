"""A worker's client keeps a target's settings a few seconds (joinops/clusters/steady.py): its
version, kubeadm ClusterConfiguration, kubelet configuration and API server port are read once
for a batch's migrations, not two or three times per node. What a migration changes is still
read every time: the nodes (a node that joined takes a pod range; a control plane that joined
counts in the next one's etcd size), and the bot keeps nothing at all.

kubesim stands for the API server: the request log is what a real one would have answered."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from kubernetes import client

from joinops.clusters.kubeletconfig import read_kubelet_config
from joinops.clusters.registry import ClusterRegistry
from joinops.clusters.steady import STEADY_SECONDS, SteadyReads
from joinops.requests.asks import MigrationAsk
from joinops.requests.model import Role
from joinops.rules.check import Verdict, check
from kubesim import NodeSpec, World
from tests.support.clusters import settings_for


def registry(world: World, tmp_path: Path, steady_seconds: float) -> ClusterRegistry:
    return ClusterRegistry(settings_for(world, tmp_path), steady_seconds=steady_seconds)


def two_clusters(world: World, subnet: str = "10.244.0.0/21", endpoint: str = "") -> None:
    """The target has two nodes, each with a /24 of `subnet`."""
    world.add_cluster(
        "clusterA",
        nodes=[NodeSpec("a-cp-1", role="control-plane")]
        + [NodeSpec(f"a-w-{i}") for i in range(1, 5)],
    )
    world.add_cluster(
        "clusterB",
        control_plane_endpoint=endpoint,
        nodes=[NodeSpec("b-cp-1", role="control-plane"), NodeSpec("b-w-1")],
        pod_subnet=subnet,
    )


def move(reg: ClusterRegistry, node: str, role: Role = Role.WORKER) -> Verdict:
    ask = MigrationAsk(node, "clusterA", "clusterB", role)
    return check(ask, reg.get("clusterA"), reg.get("clusterB"))


def target_reads(world: World) -> Counter[str]:
    reads: Counter[str] = Counter()
    for r in world.cluster("clusterB").request_log.records:
        if r.verb == "get" and r.resource == "configmaps":
            reads[r.name] += 1
        elif r.verb == "get" and r.resource == "":
            reads["version"] += 1
        elif r.verb == "list" and r.resource == "nodes":
            reads["nodes"] += 1
    return reads


def test_a_workers_checks_read_the_targets_settings_once_and_its_nodes_each_time(
    tmp_path: Path,
) -> None:
    with World() as world:
        two_clusters(world)
        reg = registry(world, tmp_path, STEADY_SECONDS)
        world.cluster("clusterB").reset_requests()
        assert all(move(reg, f"a-w-{i}").allowed for i in (1, 2, 3))
        reads = target_reads(world)
    assert reads["kubeadm-config"] == 1
    assert reads["version"] == 1
    assert reads["cluster-info"] == 3  # its signatures are per token: never kept
    assert reads["nodes"] >= 6  # control planes and pod ranges, for each check


def test_a_node_that_joined_meanwhile_takes_its_pod_range_at_once(tmp_path: Path) -> None:
    with World() as world:
        two_clusters(world, subnet="10.244.0.0/22")  # four /24s, two free
        reg = registry(world, tmp_path, STEADY_SECONDS)
        assert move(reg, "a-w-1").allowed
        for name in ("b-w-2", "b-w-3"):  # the batch's first nodes joined
            world.cluster("clusterB").add_node(NodeSpec(name))
        refused = {f.code for f in move(reg, "a-w-2").findings if f.severity.name == "REFUSAL"}
    assert "pod-range-exhausted" in refused


def test_a_control_plane_that_joined_meanwhile_counts_in_the_next_ones_etcd_size(
    tmp_path: Path,
) -> None:
    with World() as world:
        two_clusters(world, endpoint="cp.b.test:6443")
        reg = registry(world, tmp_path, STEADY_SECONDS)
        first = {f.code for f in move(reg, "a-w-1", Role.CONTROL_PLANE).findings}
        world.cluster("clusterB").add_node(NodeSpec("b-cp-2", role="control-plane"))
        second = {f.code for f in move(reg, "a-w-2", Role.CONTROL_PLANE).findings}
    assert "etcd-even" in first  # 1 + 1 members
    assert "etcd-even" not in second  # 2 + 1


def test_the_bot_reads_a_fixed_kubeadm_config_at_once(tmp_path: Path) -> None:
    with World() as world:
        two_clusters(world)  # no controlPlaneEndpoint: a control plane cannot join
        reg = registry(world, tmp_path, steady_seconds=0)
        first = {f.code for f in move(reg, "a-w-1", Role.CONTROL_PLANE).findings}
        core = client.CoreV1Api(world.cluster("clusterB").api_client())
        cm = core.read_namespaced_config_map("kubeadm-config", "kube-system")
        text = cm.data["ClusterConfiguration"] + "controlPlaneEndpoint: cp.b.test:6443\n"
        core.patch_namespaced_config_map(
            "kubeadm-config", "kube-system", {"data": {"ClusterConfiguration": text}}
        )
        second = {f.code for f in move(reg, "a-w-1", Role.CONTROL_PLANE).findings}
    assert "no-control-plane-endpoint" in first
    assert "no-control-plane-endpoint" not in second


def test_a_kept_configuration_is_the_callers_to_change(tmp_path: Path) -> None:
    with World() as world:
        two_clusters(world)
        target = registry(world, tmp_path, STEADY_SECONDS).get("clusterB")
        target.kubeadm_cluster_configuration()["networking"]["podSubnet"] = "changed"
        assert target.kubeadm_cluster_configuration()["networking"]["podSubnet"] != "changed"
        assert read_kubelet_config(target) == read_kubelet_config(target)
        kubelet_reads = [
            r for r in world.cluster("clusterB").request_log.records if r.name == "kubelet-config"
        ]
    assert len(kubelet_reads) == 1


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_an_answer_is_read_again_once_its_seconds_are_over_and_an_error_is_never_kept() -> None:
    clock = Clock()
    kept = SteadyReads(5.0, clock)
    answers = iter(["first", "second", "third"])
    assert kept.get("version", lambda: next(answers)) == "first"
    clock.now += 4.9
    assert kept.get("version", lambda: next(answers)) == "first"
    clock.now += 0.2
    assert kept.get("version", lambda: next(answers)) == "second"

    def unreachable() -> str:
        raise ConnectionError("the API server did not answer")

    clock.now += 10
    with pytest.raises(ConnectionError):
        kept.get("version", unreachable)
    assert kept.get("version", lambda: next(answers)) == "third"
