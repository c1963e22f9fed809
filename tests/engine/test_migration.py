"""The engine moves nodes end to end against simulated clusters (jobs run in this process)."""

from __future__ import annotations

import threading

from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from joinops.requests.steprecords import Outcome
from kubesim import NodeSpec
from tests.support.engine import approved_request, wait_event
from workers.runner import run_request

STEPS = ["check", "join-material", "probe", "cordon", "drain", "agent", "wait-joined", "cleanup"]


def joinops_leftovers(ctx, source: str | None, target: str) -> list[str]:
    """Every object joinops made that is still there: agent pods and secrets, tokens."""
    left = []
    clusters = [(target, ctx.clusters.get(target))]
    if source:
        clusters.append((source, ctx.clusters.get(source)))
    for name, cluster in clusters:
        for ns in ("kube-system", "joinops-system"):
            for secret in cluster.core.list_namespaced_secret(ns).items:
                if secret.metadata.name.startswith(("bootstrap-token-", "joinops-")):
                    left.append(f"{name}: secret {ns}/{secret.metadata.name}")
            for pod in cluster.core.list_namespaced_pod(ns).items:
                if pod.metadata.name.startswith("joinops-"):
                    left.append(f"{name}: pod {ns}/{pod.metadata.name}")
    return left


def node_ready(cluster, name: str) -> bool:
    node = cluster.node(name)
    conditions = (node or {}).get("status", {}).get("conditions", [])
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def test_worker_migration_honours_the_disruption_budget(world, make_ctx):
    a, b = world.cluster("clusterA"), world.cluster("clusterB")
    for i in range(2):
        a.add_pod("a-w-1", f"web-{i}", labels={"app": "web"}, owner_kind="ReplicaSet")
    a.add_pod("a-w-2", "web-2", labels={"app": "web"}, owner_kind="ReplicaSet")
    a.add_pod("a-w-1", "logs", owner_kind="DaemonSet")
    a.add_pdb("web", "default", {"app": "web"}, min_available=2)  # one disruption at a time

    def replace_evicted_pod_when_blocked() -> None:
        # What a ReplicaSet would do: once the first evicted pod is gone (the second was refused
        # meanwhile, the budget being spent), a replacement turns healthy elsewhere.
        a.wait_for(
            lambda: a.pod("default", "web-0") is None or a.pod("default", "web-1") is None,
            timeout=20,
        )
        a.add_pod("a-w-2", "web-3", labels={"app": "web"}, owner_kind="ReplicaSet")

    helper = threading.Thread(target=replace_evicted_pod_when_blocked)
    helper.start()
    ctx = make_ctx()
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.SUCCEEDED
    helper.join()

    assert node_ready(b, "a-w-1")
    assert b.node("a-w-1")["metadata"]["labels"]["node-role.kubernetes.io/worker"] == ""
    assert a.node("a-w-1") is None
    assert joinops_leftovers(ctx, "clusterA", "clusterB") == []
    records = ctx.records.all(request.id)
    assert [s for s in STEPS if records[s].outcome is Outcome.SUCCEEDED] == STEPS
    evictions = [r for r in a.requests if r.subresource == "eviction"]
    assert {r.name for r in evictions} == {"web-0", "web-1"}  # never the DaemonSet pod
    assert any(r.status == 429 for r in evictions)
    final = ctx.store.get(request.id)
    assert final.state is State.SUCCEEDED
    assert "moved from clusterA to clusterB as worker" in final.outcome


def test_control_plane_migration_uploads_certificates(world, make_ctx):
    a, b = world.cluster("clusterA"), world.cluster("clusterB")
    ctx = make_ctx()
    request = approved_request(ctx, "a-cp-3", "clusterA", "clusterB", Role.CONTROL_PLANE)
    assert run_request(ctx, request.id) is State.SUCCEEDED, ctx.store.get(request.id).outcome
    assert b.secret("kube-system", "kubeadm-certs") is not None
    assert node_ready(b, "a-cp-3")
    assert "node-role.kubernetes.io/control-plane" in b.node("a-cp-3")["metadata"]["labels"]
    assert a.node("a-cp-3") is None
    assert sorted(a.control_plane_nodes()) == ["a-cp-1", "a-cp-2"]
    assert joinops_leftovers(ctx, "clusterA", "clusterB") == []
    text = ctx.records.get(request.id, "join-material").message
    assert "Control-plane certificates uploaded" in text


def test_single_node_source_moves_and_the_source_is_gone(world, make_ctx):
    b = world.cluster("clusterB")
    ctx = make_ctx()
    request = approved_request(ctx, "node-1", "host-1", "clusterB", Role.CONTROL_PLANE)
    assert request.destroys_source
    assert run_request(ctx, request.id) is State.SUCCEEDED, ctx.store.get(request.id).outcome
    assert node_ready(b, "node-1")
    assert not world.cluster("host-1").reachable
    cleanup = ctx.records.get(request.id, "cleanup").message
    assert "host-1 no longer exists, as expected" in cleanup
    assert joinops_leftovers(ctx, None, "clusterB") == []


def test_drain_timeout_uncordons_and_names_the_blocking_pod_and_budget(world, make_ctx):
    a = world.cluster("clusterA")
    a.add_pod("a-w-1", "db-0", labels={"app": "db"}, owner_kind="StatefulSet")
    a.add_pdb("db", "default", {"app": "db"}, min_available=1)
    ctx = make_ctx(timeouts={"drain": "1s"})
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.FAILED
    final = ctx.store.get(request.id)
    assert final.failed_step == "drain"
    assert "default/db-0 (eviction refused by the disruption budget `db`: needs" in final.outcome
    assert "`a-w-1` is still in clusterA" in final.outcome
    assert not a.node("a-w-1")["spec"].get("unschedulable")
    assert joinops_leftovers(ctx, "clusterA", "clusterB") == []
    records = ctx.records.all(request.id)
    assert records["cordon"].outcome is Outcome.ROLLED_BACK
    assert records["join-material"].outcome is Outcome.ROLLED_BACK


def test_drain_timeout_leaves_a_cordoned_node_cordoned(world, make_ctx):
    a = world.cluster("clusterA")
    a.add_pod("a-w-1", "db-0", labels={"app": "db"}, owner_kind="StatefulSet")
    a.add_pdb("db", "default", {"app": "db"}, min_available=1)
    ctx = make_ctx(timeouts={"drain": "1s"})
    ctx.clusters.get("clusterA").core.patch_node("a-w-1", {"spec": {"unschedulable": True}})
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.FAILED
    assert a.node("a-w-1")["spec"]["unschedulable"] is True


def test_invalid_join_material_fails_clearly_and_cleans_the_token(world, make_ctx):
    b = world.cluster("clusterB")

    def remove_token_behind_the_engines_back(event) -> None:
        if event.step == "agent" and event.kind == "step-succeeded":
            api = ctx.clusters.get("clusterB").core
            for s in api.list_namespaced_secret("kube-system").items:
                if s.metadata.name.startswith("bootstrap-token-"):
                    api.delete_namespaced_secret(s.metadata.name, "kube-system")

    # without a way back (a failed join that returns: tests/engine/test_join_return.py)
    ctx = make_ctx(
        hooks=[remove_token_behind_the_engines_back],
        timeouts={"join": "2s"},
        agent={"return_to_source": False},
    )
    world.join_seconds = 0.5
    request = approved_request(ctx, "a-w-2", "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.FAILED
    final = ctx.store.get(request.id)
    assert final.failed_step == "wait-joined"
    assert "did not become Ready in clusterB" in final.outcome
    assert f"journalctl -u joinops-join-{request.id}" in final.outcome
    assert f"/join retry {request.id}" in final.outcome
    assert world.join_failure("a-w-2") is not None
    assert b.node("a-w-2") is None
    assert not [
        s
        for s in ctx.clusters.get("clusterB").core.list_namespaced_secret("kube-system").items
        if s.metadata.name.startswith("bootstrap-token-")
    ]


def test_a_second_migration_of_the_same_node_is_refused_naming_the_first(world, make_ctx):
    a = world.cluster("clusterA")
    a.add_pod("a-w-1", "db-0", labels={"app": "db"}, owner_kind="StatefulSet")
    a.add_pdb("db", "default", {"app": "db"}, min_available=1)
    ctx = make_ctx(timeouts={"drain": "30s"})
    first = approved_request(ctx, "a-w-1", "clusterA", "clusterB")
    second = approved_request(ctx, "a-w-1", "clusterA", "clusterB")
    runner = threading.Thread(target=run_request, args=(ctx, first.id))
    runner.start()
    wait_event(ctx, first.id, lambda e: e.step == "drain" and e.kind == "step-started")
    assert run_request(ctx, second.id) is State.FAILED
    assert f"already being moved by request {first.id}" in ctx.store.get(second.id).outcome
    a.delete_pod("default", "db-0")  # let the first one finish
    runner.join()
    assert ctx.store.get(first.id).state is State.SUCCEEDED


def test_a_kubelet_one_minor_behind_gets_a_config_its_kubeadm_can_read(world, make_ctx):
    """kubeadm 1.30 cannot read v1beta4: the JoinConfiguration follows the node, not the target."""
    world.add_cluster(
        "clusterD",
        version="v1.31.2",
        control_plane_endpoint="cp.d.test:6443",
        nodes=[NodeSpec("d-cp-1", role="control-plane")],
    )
    world.cluster("clusterA").add_node(NodeSpec("a-w-old", kubelet_version="v1.30.9"))
    ctx = make_ctx()
    request = approved_request(ctx, "a-w-old", "clusterA", "clusterD")
    assert run_request(ctx, request.id) is State.SUCCEEDED, ctx.store.get(request.id).outcome
    node = world.cluster("clusterD").node("a-w-old")
    assert node["status"]["nodeInfo"]["kubeletVersion"] == "v1.30.9"


def test_a_run_whose_locks_expired_stops_and_the_request_ends_once(world, make_ctx):
    """Redis away longer than the lock ttl: a second run took the request; the first stands down."""
    a = world.cluster("clusterA")
    a.add_pod("a-w-1", "db-0", labels={"app": "db"}, owner_kind="StatefulSet")
    a.add_pdb("db", "default", {"app": "db"}, min_available=1)
    ctx = make_ctx(timeouts={"drain": "60s", "lock": "1s"})
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")
    first = threading.Thread(target=run_request, args=(ctx, request.id))
    first.start()
    wait_event(ctx, request.id, lambda e: e.step == "drain" and e.kind == "step-started")
    for key in ctx.redis.scan_iter("joinops:lock:*"):
        ctx.redis.delete(key)  # what an expiry looks like to the first run's heartbeat
    second = threading.Thread(target=run_request, args=(ctx, request.id))
    second.start()
    wait_event(ctx, request.id, lambda e: "Resumed after a worker restart" in e.text)
    ctx.clusters.get("clusterA").policy.delete_namespaced_pod_disruption_budget("db", "default")
    first.join(30)
    second.join(30)
    finals = [e for e in ctx.reporter.history(request.id) if e.is_final]
    assert [e.state for e in finals] == ["succeeded"]
    assert ctx.records.get(request.id, "cleanup").attempts == 1
    assert world.cluster("clusterB").node("a-w-1") is not None
