"""A controlPlaneEndpoint written without a port (issue 31, item 6).

kubeadm's `GetControlPlaneEndpoint` (cmd/kubeadm/app/util/endpoint.go, read for this) gives an
endpoint without a port the API server's `bindPort`, not 6443: a target whose kube-apiservers
listen on 8443 is reached at `host:8443`. kubesim resolves such an endpoint the same way
(`Cluster.set_api_server_port`), so a join at `host:6443` finds no API server there.
"""

from __future__ import annotations

from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from kubesim import NodeSpec
from tests.engine.test_cp_safety import capture_join_config, outcome
from tests.support.engine import approved_request
from workers.runner import run_request


def _target_on_8443(world):  # type: ignore[no-untyped-def]
    e = world.add_cluster(
        "clusterE",
        version="v1.32.2",
        control_plane_endpoint="cp.e.test",  # no port
        nodes=[NodeSpec("e-cp-1", role="control-plane"), NodeSpec("e-w-1")],
    )
    e.set_api_server_port(8443)
    return e


def test_a_worker_joins_an_endpoint_without_port_at_the_api_servers_bind_port(world, make_ctx):
    _target_on_8443(world)
    found: dict = {}
    ctx = make_ctx(hooks=[capture_join_config(world, "clusterA", found)])
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterE")
    assert run_request(ctx, request.id) is State.SUCCEEDED, outcome(ctx, request)
    assert found["discovery"]["bootstrapToken"]["apiServerEndpoint"] == "cp.e.test:8443"
    assert world.host("a-w-1").cluster == "clusterE"


def test_a_control_plane_joins_it_with_its_own_api_server_on_the_same_port(world, make_ctx):
    _target_on_8443(world)
    found: dict = {}
    ctx = make_ctx(hooks=[capture_join_config(world, "clusterA", found)])
    request = approved_request(ctx, "a-cp-3", "clusterA", "clusterE", Role.CONTROL_PLANE)
    assert run_request(ctx, request.id) is State.SUCCEEDED, outcome(ctx, request)
    assert found["discovery"]["bootstrapToken"]["apiServerEndpoint"] == "cp.e.test:8443"
    assert found["controlPlane"]["localAPIEndpoint"]["bindPort"] == 8443
