"""A rule check costs the same number of API calls whatever the cluster's size."""

from __future__ import annotations

from joinops.requests.asks import MigrationAsk
from joinops.requests.model import Role
from joinops.rules.check import check
from kubesim import NodeSpec, World
from tests.support.clusters import registry_for


def cost_of_check(
    tmp_path, workers: int, pods: int = 0, control_planes: int = 1
) -> tuple[int, int]:
    with World() as world:
        source = world.add_cluster(
            "src",
            version="v1.31.2",
            nodes=[
                NodeSpec("src-cp" if i == 0 else f"src-cp-{i}", role="control-plane")
                for i in range(control_planes)
            ],
        )
        target = world.add_cluster(
            "dst",
            version="v1.31.2",
            control_plane_endpoint="dst:6443",
            nodes=[NodeSpec("dst-cp", role="control-plane")],
            pod_subnet="10.0.0.0/8",  # a /24 per node: room for 65,536 nodes
        )
        source.add_nodes(workers, prefix="src-w")
        target.add_nodes(workers, prefix="dst-w")
        for i in range(pods):  # DaemonSet pods and claims: one DaemonSet list, one PV list
            source.add_pod("src-cp", f"agent-{i}", owner_kind="DaemonSet", owner_name="agent")
            claim = {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": f"c{i}"}}]}
            source.add_pod("src-cp", f"db-{i}", owner_kind="StatefulSet", spec=claim)
        registry = registry_for(world, tmp_path)
        ask = MigrationAsk("src-cp", "src", "dst", Role.CONTROL_PLANE)
        check(ask, registry.get("src"), registry.get("dst"))  # warm up: connections, discovery
        source.reset_requests()
        target.reset_requests()
        verdict = check(ask, registry.get("src"), registry.get("dst"))
        expected = (
            ["last-control-plane", "etcd-even"]
            if control_planes == 1
            else ["etcd-even", "etcd-even"]  # 3 -> 2 in the source, 1 -> 2 in the target
        )
        assert [f.code for f in verdict.findings] == expected
        records = source.requests + target.requests
        return len(records), sum(r.bytes_out for r in records)


def test_check_cost_is_flat_from_10_to_2000_nodes(tmp_path):
    small_calls, small_bytes = cost_of_check(tmp_path, 10)
    large_calls, large_bytes = cost_of_check(tmp_path, 2000)
    # source: get node, control planes, at most two nodes, the node's pods, the agent namespace;
    # target: version, kubeadm-config, control planes, get node, cluster-info (the CA pins the
    # node will see), the kube-controller-manager mirror pods and one page of one node (its pod
    # ranges: remainingItemCount counts the nodes)
    assert small_calls == large_calls == 12
    assert large_bytes < small_bytes * 1.2  # a few digits longer (counts), never a node list


def test_check_cost_does_not_grow_with_the_pods_on_the_node(tmp_path):
    few_calls, _ = cost_of_check(tmp_path, 10, pods=2)
    many_calls, _ = cost_of_check(tmp_path, 10, pods=200)
    assert few_calls == many_calls == 14  # + one DaemonSet list + one PersistentVolume list


def test_the_quorum_guard_costs_one_pod_whatever_the_size(tmp_path):
    """A control plane with peers: their etcd/kube-apiserver mirror pods, by label selector,
    and etcd's own member list, read by one short-lived pod on a peer (create, watch it from
    its creation to its end, delete): three calls, whatever the number of nodes and however
    soon the pod ends; and the source's
    kubeadm-config (its controlPlaneEndpoint, which may lead to the leaving node)."""
    small_calls, small_bytes = cost_of_check(tmp_path, 10, control_planes=3)
    large_calls, large_bytes = cost_of_check(tmp_path, 2000, control_planes=3)
    # the mirror-pod list replaces the two-node listing (the node is not the last control plane)
    assert small_calls == large_calls == 16
    assert large_bytes < small_bytes * 1.2
