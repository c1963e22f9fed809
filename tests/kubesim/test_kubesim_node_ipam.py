"""Node IPAM: each Node gets a pod range from the cluster's podSubnet, as kube-controller-manager's
range allocator gives them (kubernetes pkg/controller/nodeipam/ipam/range_allocator.go and
cidrset/cidr_set.go: ranges in order; when none is left the node gets none and the Event
`CIDRNotAvailable`, "Node X status is now: CIDRNotAvailable", from nodeutil.RecordNodeStatusChange;
a deleted node's range is released and a node still without one gets it)."""

from __future__ import annotations

import yaml
from kubernetes import client

from kubesim import NodeSpec, World


def pod_cidrs(core: client.CoreV1Api) -> dict[str, list[str]]:
    return {str(n.metadata.name): list(n.spec.pod_cidrs or []) for n in core.list_node().items}


def test_nodes_get_ranges_in_order_until_the_pod_subnet_is_used_up() -> None:
    with World() as world:
        cluster = world.add_cluster(
            "small",
            nodes=[NodeSpec("cp-1", role="control-plane")],
            pod_subnet="10.244.0.0/23",  # two /24s
        )
        cluster.add_nodes(2, prefix="w")
        core = client.CoreV1Api(cluster.api_client())

        assert pod_cidrs(core) == {"cp-1": ["10.244.0.0/24"], "w-1": ["10.244.1.0/24"], "w-2": []}
        assert core.read_node("w-2").spec.pod_cidr is None
        events = core.list_namespaced_event("default", field_selector="reason=CIDRNotAvailable")
        assert [(e.involved_object.name, e.message) for e in events.items] == [
            ("w-2", "Node w-2 status is now: CIDRNotAvailable")
        ]

        core.delete_node("w-1")  # its range is free again: the waiting node gets it
        world.wait_for(lambda: core.read_node("w-2").spec.pod_cidr == "10.244.1.0/24")


def test_the_kubeadm_config_shows_the_pod_subnet_and_a_mask_that_is_not_the_default() -> None:
    with World() as world:
        cluster = world.add_cluster(
            "wide",
            nodes=[NodeSpec("cp-1", role="control-plane"), NodeSpec("w-1")],
            pod_subnet="10.32.0.0/16",
            node_cidr_mask_size=26,
        )
        core = client.CoreV1Api(cluster.api_client())
        config = core.read_namespaced_config_map("kubeadm-config", "kube-system")
        doc = yaml.safe_load(config.data["ClusterConfiguration"])

        assert doc["networking"]["podSubnet"] == "10.32.0.0/16"
        assert doc["controllerManager"]["extraArgs"] == [
            {"name": "node-cidr-mask-size", "value": "26"}
        ]
        assert pod_cidrs(core) == {"cp-1": ["10.32.0.0/26"], "w-1": ["10.32.0.64/26"]}


def test_a_dual_stack_pod_subnet_gives_one_range_of_each_family() -> None:
    with World() as world:
        cluster = world.add_cluster(
            "dual",
            nodes=[NodeSpec("cp-1", role="control-plane")],
            pod_subnet="10.244.0.0/16,fd00::/56",
        )
        core = client.CoreV1Api(cluster.api_client())
        assert pod_cidrs(core) == {"cp-1": ["10.244.0.0/24", "fd00::/64"]}


def test_a_cluster_without_pod_subnet_gives_no_ranges_and_records_nothing() -> None:
    with World() as world:
        cluster = world.add_cluster(
            "none", nodes=[NodeSpec("cp-1", role="control-plane")], pod_subnet=""
        )
        core = client.CoreV1Api(cluster.api_client())
        config = yaml.safe_load(
            core.read_namespaced_config_map("kubeadm-config", "kube-system").data[
                "ClusterConfiguration"
            ]
        )
        assert "podSubnet" not in config["networking"]
        assert pod_cidrs(core) == {"cp-1": []}
        assert core.list_namespaced_event("default").items == []
