"""Moves that never strand a node (issue 14): CA pins from cluster-info, a proxy in front of the
target, CA bundles, a busy watch cache, the quorum guard right before the agent, and a
control-plane join that is complete only when its control plane is."""

from __future__ import annotations

import threading

import yaml

from joinops.requests.events import EventKind
from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from kubesim import NodeSpec
from kubesim.behaviours import static_pods
from kubesim.pki import CertificateAuthority
from tests.support.engine import approved_request, wait_event
from workers import agent
from workers.locks import control_plane_lock
from workers.runner import run_request


def capture_join_config(world, source: str, found: dict):  # type: ignore[no-untyped-def]
    """A hook that reads the JoinConfiguration the agent got, once the agent step is done."""

    def hook(event) -> None:  # type: ignore[no-untyped-def]
        if event.kind is EventKind.STEP_SUCCEEDED and event.step == "agent":
            values = world.cluster(source).secret_values(
                "joinops-system", agent.join_secret_name(event.request_id)
            )
            found.update(yaml.safe_load(values[agent.JOIN_KEY]))

    return hook


def outcome(ctx, request) -> str:  # type: ignore[no-untyped-def]
    return ctx.store.get(request.id).outcome


def test_a_target_behind_a_tls_proxy_is_joined_at_cluster_infos_server_and_ca(world, make_ctx):
    n = world.add_cluster(
        "clusterN", version="v1.32.2", nodes=[NodeSpec("n-cp-1", "control-plane")]
    )
    proxy = n.add_proxy()  # joinops's kubeconfig: the proxy's URL and CA, not the cluster's
    found: dict = {}
    ctx = make_ctx(hooks=[capture_join_config(world, "clusterA", found)])
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterN")
    assert run_request(ctx, request.id) is State.SUCCEEDED, outcome(ctx, request)
    assert world.host("a-w-1").cluster == "clusterN"
    discovery = found["discovery"]["bootstrapToken"]
    assert discovery["apiServerEndpoint"] == n.host_port  # cluster-info's server
    assert discovery["caCertHashes"] == [n.ca_cert_hash]
    assert proxy.port != n.port
    assert any(r.status == 200 for r in n.requests)


def test_a_kubeconfig_whose_ca_is_a_two_certificate_bundle_works(world, make_ctx):
    b = world.cluster("clusterB")
    b.kubeconfig_extra_cas = [CertificateAuthority("old-ca").cert_pem]  # first: not the CA
    found: dict = {}
    ctx = make_ctx(hooks=[capture_join_config(world, "clusterA", found)])
    request = approved_request(ctx, "a-w-2", "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.SUCCEEDED, outcome(ctx, request)
    assert found["discovery"]["bootstrapToken"]["caCertHashes"] == [b.ca_cert_hash]


def test_every_ca_of_a_cluster_info_bundle_is_pinned(world, make_ctx):
    b = world.cluster("clusterB")
    rotated = CertificateAuthority("next-ca")
    b.set_cluster_info_cas([rotated.cert_pem])
    found: dict = {}
    ctx = make_ctx(hooks=[capture_join_config(world, "clusterA", found)])
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.SUCCEEDED, outcome(ctx, request)
    hashes = found["discovery"]["bootstrapToken"]["caCertHashes"]
    assert hashes == [b.ca_cert_hash, rotated.cert_hash()]


def test_a_504_too_large_resource_version_on_the_cluster_info_watch_does_not_fail(world, make_ctx):
    b = world.cluster("clusterB")
    world.signer_delay_seconds = 3.0  # the agent step has to watch for the signature
    b.faults.add_too_large_resource_version(path_contains="configmaps", times=3)
    ctx = make_ctx()
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.SUCCEEDED, outcome(ctx, request)
    too_large = [r for r in b.requests if r.status == 504 and r.resource == "configmaps"]
    assert 1 <= len(too_large) <= 3 and all(r.query.get("watch") for r in too_large)
    retried = [
        e for e in ctx.reporter.events if e.kind is EventKind.STEP_RETRYING and e.step == "agent"
    ]
    assert retried == []  # relisted inside the watch, not a failed attempt


def test_a_control_plane_that_went_notready_stops_the_move_right_before_the_agent(world, make_ctx):
    a = world.cluster("clusterA")

    def peer_fails(event) -> None:  # type: ignore[no-untyped-def]
        if event.kind is EventKind.STEP_STARTED and event.step == "agent":
            a.stop_kubelet("a-cp-2")

    ctx = make_ctx(hooks=[peer_fails])
    request = approved_request(ctx, "a-cp-3", "clusterA", "clusterB", Role.CONTROL_PLANE)
    assert run_request(ctx, request.id) is State.FAILED
    final = ctx.store.get(request.id)
    assert final.failed_step == "agent"
    assert "`a-cp-2` (node NotReady)" in final.outcome
    assert world.host("a-cp-3").cluster == "clusterA"  # nothing was done to the node
    assert not a.node("a-cp-3")["spec"].get("unschedulable")


def test_a_control_plane_move_succeeds_only_once_its_control_plane_is_up(
    world, make_ctx, redis_client
):
    a, b = world.cluster("clusterA"), world.cluster("clusterB")
    b.api_server_port = 7443
    static_pods.add_control_plane_pods(b, b.host_of("b-cp-1"), ready=True)
    world.hold_control_plane_phase()
    found: dict = {}
    ctx = make_ctx(hooks=[capture_join_config(world, "clusterA", found)])
    request = approved_request(ctx, "a-cp-3", "clusterA", "clusterB", Role.CONTROL_PLANE)
    internal_ip = a.node("a-cp-3")["status"]["addresses"][0]["address"]
    result: list[State | None] = []
    worker = threading.Thread(target=lambda: result.append(run_request(ctx, request.id)))
    worker.start()
    try:
        b.wait_for(lambda: b.pod("kube-system", "etcd-a-cp-3") is None and _ready(b, "a-cp-3"), 20)
        # the node is Ready, its control plane is not: still running, the lock still held
        wait_event(ctx, request.id, lambda e: "waiting for its control plane" in e.text)
        assert ctx.store.get(request.id).state is State.RUNNING
        assert redis_client.exists(control_plane_lock("clusterB"))
    finally:
        world.hold_control_plane_phase(False)
        worker.join(30)
    assert result == [State.SUCCEEDED], outcome(ctx, request)
    for component in ("etcd", "kube-apiserver"):
        pod = b.pod("kube-system", f"{component}-a-cp-3")
        assert any(
            c["type"] == "Ready" and c["status"] == "True" for c in pod["status"]["conditions"]
        )
    local = found["controlPlane"]["localAPIEndpoint"]
    assert local == {"bindPort": 7443, "advertiseAddress": internal_ip}


def _ready(cluster, name: str) -> bool:  # type: ignore[no-untyped-def]
    node = cluster.node(name)
    conditions = (node or {}).get("status", {}).get("conditions", [])
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def test_the_unit_cleans_what_kubeadm_reset_leaves_between_reset_and_join(world, make_ctx):
    ctx = make_ctx()
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")
    host = world.host("a-w-1")
    assert "/etc/cni/net.d/10-calico.conflist" in host.leftovers  # the source's CNI
    assert run_request(ctx, request.id) is State.SUCCEEDED, outcome(ctx, request)
    assert host.cleaned == [
        "/etc/cni/net.d/10-calico.conflist",
        "iptables KUBE-* chains",
        "/root/.kube/config",
        "/var/lib/cni/",
    ]
    assert host.leftovers == []


def test_a_504_too_large_resource_version_on_the_drain_watch_relists(world, make_ctx):
    a = world.cluster("clusterA")
    a.add_pod("a-w-1", "web-0", labels={"app": "web"}, owner_kind="ReplicaSet")
    a.faults.add_too_large_resource_version(path_contains="/pods?", times=2)
    ctx = make_ctx()
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.SUCCEEDED, outcome(ctx, request)
    assert 1 <= len([r for r in a.requests if r.status == 504]) <= 2
    assert a.pod("default", "web-0") is None
