"""What still points at a control plane that leaves (issue 31, item 5): the source's
controlPlaneEndpoint is listed in the plan, and warned about when it is the node's own address or
an address no node has (a load balancer, or a virtual IP the node may hold)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml
from kubernetes import client

from joinops.requests.asks import MigrationAsk
from joinops.requests.model import Role
from joinops.rules.check import check
from kubesim import NodeSpec, World
from tests.support.clusters import registry_for

NODES = [NodeSpec(f"s-cp-{i}", role="control-plane") for i in (1, 2, 3)]


@pytest.fixture
def world() -> Iterator[World]:
    with World() as w:
        w.add_cluster("src", version="v1.31.4", control_plane_endpoint="cp.src.test", nodes=NODES)
        w.add_cluster(
            "dst",
            version="v1.32.2",
            control_plane_endpoint="cp.dst.test:6443",
            nodes=[NodeSpec("t-cp-1", role="control-plane")],
        )
        yield w


def set_endpoint(world: World, endpoint: str) -> None:
    """The source's kubeadm-config as kubeadm would have written it with this endpoint."""
    src = world.cluster("src")
    data = dict(src.configmap("kube-system", "kubeadm-config")["data"])
    config = yaml.safe_load(data["ClusterConfiguration"])
    config["controlPlaneEndpoint"] = endpoint
    api = client.CoreV1Api(src.api_client())
    try:
        api.patch_namespaced_config_map(
            "kubeadm-config",
            "kube-system",
            {"data": {"ClusterConfiguration": yaml.safe_dump(config)}},
        )
    finally:
        api.api_client.close()


def findings(world: World, tmp_path) -> dict[str, tuple[str, str]]:  # type: ignore[no-untyped-def]
    registry = registry_for(world, tmp_path)
    ask = MigrationAsk("s-cp-1", "src", "dst", Role.CONTROL_PLANE)
    verdict = check(ask, registry.get("src"), registry.get("dst"))
    return {f.code: (f.severity.name, f.text) for f in verdict.findings}


def test_an_endpoint_that_is_the_nodes_own_address_is_warned(world, tmp_path):
    address = world.host("s-cp-1").internal_ip
    set_endpoint(world, f"{address}:6443")
    found = findings(world, tmp_path)
    assert found["source-endpoint"][1] == f"src's controlPlaneEndpoint is `{address}:6443`."
    severity, text = found["endpoint-is-node"]
    assert severity == "WARNING" and f"is `s-cp-1`'s own address {address}" in text


def test_an_endpoint_no_node_has_may_be_a_virtual_ip_the_node_holds(world, tmp_path):
    set_endpoint(world, "192.0.2.10:6443")
    severity, text = findings(world, tmp_path)["endpoint-may-be-vip"]
    assert severity == "WARNING" and "a load balancer or a virtual IP" in text


def test_an_endpoint_on_another_control_plane_is_only_listed(world, tmp_path):
    set_endpoint(world, f"{world.host('s-cp-2').internal_ip}:6443")
    found = findings(world, tmp_path)
    assert "source-endpoint" in found
    assert "endpoint-is-node" not in found and "endpoint-may-be-vip" not in found
