"""A control plane on joinops's own VIP layout moves (issue 31, item 5).

What the simulator models (kubesim `Host.give_vip_layout`, read from joinops/ignition/virtual_ip.py
and kubeadm's cmd/kubeadm/app/preflight/checks.go): keepalived and the local nginx run as units,
nginx holds the API port (6443), and the marker file says the layout is joinops's. kubeadm's
control-plane join preflight fails with "Port-6443 is in use" while nginx runs; the probe (before
the reset) ignores that port only on a host with the marker, because the unit stops and disables
both between `kubeadm reset` and `kubeadm join`.
"""

from __future__ import annotations

from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from tests.engine.test_cp_safety import outcome
from tests.support.engine import approved_request
from workers.runner import run_request

UNITS = ("keepalived.service", "ocne-nginx.service")


def test_keepalived_and_nginx_are_stopped_before_the_join_and_the_move_succeeds(world, make_ctx):
    host = world.host("a-cp-3")
    host.give_vip_layout(6443)
    ctx = make_ctx()
    request = approved_request(ctx, "a-cp-3", "clusterA", "clusterB", Role.CONTROL_PLANE)
    assert run_request(ctx, request.id) is State.SUCCEEDED, outcome(ctx, request)
    assert host.cluster == "clusterB"
    assert {unit: host.units[unit] for unit in UNITS} == dict.fromkeys(UNITS, "disabled")
    assert [c for c in host.cleaned if c.startswith("unit ")] == [f"unit {u}" for u in UNITS]
    assert 6443 not in host.held_ports() or host.held_ports()[6443] == "kube-apiserver"


def test_without_the_marker_nginx_on_the_api_port_fails_the_probe_before_anything_changes(
    world, make_ctx
):
    host = world.host("a-cp-3")
    host.give_vip_layout(6443)
    host.files.clear()  # nginx on 6443, but not joinops's layout: nothing will stop it
    ctx = make_ctx()
    request = approved_request(ctx, "a-cp-3", "clusterA", "clusterB", Role.CONTROL_PLANE)
    assert run_request(ctx, request.id) is State.FAILED
    final = ctx.store.get(request.id)
    assert final.failed_step == "probe"
    assert "Port 6443 is in use" in final.outcome
    assert host.cluster == "clusterA" and host.units["ocne-nginx.service"] == "running"
