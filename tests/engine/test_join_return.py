"""A join that fails after the reset brings the node back into its source (issue 35).

kubesim's targets refuse the join at a chosen phase as real ones fail: discovery (cluster-info
not answered), TLS bootstrap (the kubelet's CSR never approved), the etcd member add of a
control-plane join (kubeadm exits after the node turned Ready), or Ready never reached (no CNI).
The node agent's unit then writes its decisive `abandoned` mark in the source, resets again and
joins the source once joinops has removed the old Node (kubeadm refuses a join while a Ready
Node of that name exists).
"""

from __future__ import annotations

import base64

import pytest

from joinops.queue import enqueue_migration
from joinops.requests.asks import MigrationAsk
from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from joinops.rules.check import check
from kubesim.resources import ROLEBINDINGS, ROLES
from tests.engine.test_migration import joinops_leftovers, node_ready
from tests.support.clusters import write_config
from tests.support.engine import (
    approved_request,
    kill_worker,
    start_worker,
    stop_worker,
    wait_event,
    wait_final,
)
from workers.runner import run_request

RETURNS = {"return_to_source": True}  # off by default (config agent.return_to_source)


@pytest.mark.parametrize("phase", ["discovery", "tls-bootstrap", "ready"])
def test_a_worker_whose_join_fails_goes_back_schedulable(world, make_ctx, phase):
    a, b = world.cluster("clusterA"), world.cluster("clusterB")
    ctx = make_ctx(timeouts={"join": "2s"}, agent=RETURNS)
    api = ctx.clusters.get("clusterA").core
    api.patch_node("a-w-1", {"metadata": {"labels": {"team": "blue"}}})
    api.patch_node(
        "a-w-1", {"spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]}}
    )
    world.behaviours.hosts.refusals.refuse("clusterB", phase)
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")

    assert run_request(ctx, request.id) is State.RETURNED, ctx.store.get(request.id).outcome

    final = ctx.store.get(request.id)
    assert "join into clusterB failed (" in final.outcome
    assert "`a-w-1` is back in clusterA as a worker, schedulable again" in final.outcome
    assert node_ready(a, "a-w-1")
    back = a.node("a-w-1")
    assert not back["spec"].get("unschedulable")
    assert back["metadata"]["labels"]["team"] == "blue"
    assert {"key": "dedicated", "value": "db", "effect": "NoSchedule"} in back["spec"]["taints"]
    # a join that got as far as registering leaves no NotReady Node behind in the target
    assert b.node("a-w-1") is None
    assert world.host("a-w-1").cluster == "clusterA"
    assert joinops_leftovers(ctx, "clusterA", "clusterB") == []
    audit = [e.action for e in ctx.audit.entries() if e.request_id == request.id]
    assert audit[-1] == "returned"


def test_a_control_plane_goes_back_with_its_etcd_member(world, make_ctx):
    a = world.cluster("clusterA")
    ctx = make_ctx(timeouts={"join": "3s"}, agent=RETURNS)
    world.behaviours.hosts.refusals.refuse("clusterB", "etcd-member-add")
    request = approved_request(ctx, "a-cp-3", "clusterA", "clusterB", Role.CONTROL_PLANE)

    assert run_request(ctx, request.id) is State.RETURNED, ctx.store.get(request.id).outcome

    final = ctx.store.get(request.id)
    assert "etcd" in final.outcome
    assert "`a-cp-3` is back in clusterA as a control plane, schedulable again" in final.outcome
    assert node_ready(a, "a-cp-3")
    assert sorted(a.control_plane_nodes()) == ["a-cp-1", "a-cp-2", "a-cp-3"]
    assert a.etcd.named("a-cp-3") is not None
    assert joinops_leftovers(ctx, "clusterA", "clusterB") == []


def test_a_single_node_source_is_planned_as_cannot_return(world, make_ctx):
    ctx = make_ctx(agent=RETURNS)
    verdict = check(
        MigrationAsk("node-1", "host-1", "clusterB", Role.CONTROL_PLANE, False),
        ctx.clusters.get("host-1"),
        ctx.clusters.get("clusterB"),
    )
    said = " ".join(f.text for f in verdict.findings)
    assert "If the join fails, the node cannot return: its cluster is gone." in said


def test_a_worker_killed_during_the_return_is_resumed_and_returns_once(
    world, make_ctx, tmp_path, redis_url
):
    a = world.cluster("clusterA")
    world.behaviours.hosts.refusals.refuse("clusterB", "tls-bootstrap")
    config = write_config(world, tmp_path, timeouts={"join": "30s"}, agent=RETURNS)
    ctx = make_ctx(timeouts={"join": "30s"}, agent=RETURNS)
    request = approved_request(ctx, "a-w-2", "clusterA", "clusterB")
    enqueue_migration(ctx.redis, ctx.settings, request.id)

    first = start_worker(config, redis_url, tmp_path / "worker-1.log")
    try:  # killed once it has read the agent's mark (whether it made way yet depends on timing)
        wait_event(ctx, request.id, lambda e: "is taking it back into clusterA" in e.text)
        world.hold_joins()  # the host's way back waits: the return cannot end without a worker
    finally:
        kill_worker(first)
    assert ctx.store.get(request.id).state is State.RUNNING

    second = start_worker(config, redis_url, tmp_path / "worker-2.log")
    world.hold_joins(False)
    try:
        final = wait_final(ctx, request.id, timeout=90)
    finally:
        stop_worker(second)

    assert final.state == "returned", final.text
    assert "`a-w-2` is back in clusterA as a worker, schedulable again" in final.text
    assert node_ready(a, "a-w-2") and not a.node("a-w-2")["spec"].get("unschedulable")
    joins = [e.cluster for e in world.events if e.kind == "host-joined" and e.subject == "a-w-2"]
    assert joins == ["clusterA"]  # joined back once, never into clusterB
    ended = [
        e.action
        for e in ctx.audit.entries()
        if e.request_id == request.id and e.action in ("returned", "failed", "succeeded")
    ]
    assert ended == ["returned"]
    assert joinops_leftovers(ctx, "clusterA", "clusterB") == []


def test_a_return_that_fails_too_ends_failed_with_both_errors(world, make_ctx):
    """The target's join tokens gone behind the engine's back, and the source's return token no
    longer usable for signing (its bootstrap signer then drops the token's cluster-info
    signature, so kubeadm's discovery refuses it; the token still authenticates the agent's
    record writes): the target refuses the join, the source the way back; the request fails as
    without a return, naming both."""

    def remove_tokens_behind_the_engines_back(event) -> None:  # type: ignore[no-untyped-def]
        if event.step == "agent" and event.kind == "step-succeeded":
            api = ctx.clusters.get("clusterB").core
            for s in api.list_namespaced_secret("kube-system").items:
                if s.metadata.name.startswith("bootstrap-token-"):
                    api.delete_namespaced_secret(s.metadata.name, "kube-system")
            unsign_tokens(ctx, "clusterA")

    ctx = make_ctx(
        hooks=[remove_tokens_behind_the_engines_back], timeouts={"join": "2s"}, agent=RETURNS
    )
    world.join_seconds = 0.5
    request = approved_request(ctx, "a-w-2", "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.FAILED
    final = ctx.store.get(request.id)
    assert final.failed_step == "wait-joined"
    assert "join into clusterB failed (kubeadm: " in final.outcome
    assert "the way back into clusterA failed too (kubeadm: " in final.outcome
    assert f"journalctl -u joinops-join-{request.id}" in final.outcome
    assert f"/join retry {request.id}" in final.outcome


@pytest.mark.parametrize("ending", ["succeeded", "returned", "failed"])
def test_the_agents_grant_on_its_record_lasts_exactly_as_long_as_the_move(world, make_ctx, ending):
    """A real API server lets the return token (system:bootstrap:<id>, its extra group
    system:bootstrappers:joinops:<request>) write the record only through a RoleBinding; kubesim's
    simulated agent is authorised the same way. The Role and its binding name that one
    ConfigMap and group while the node moves, and are gone after every ending."""
    a = world.cluster("clusterA")
    seen: list[tuple[list[dict], list[dict]]] = []

    def at_the_agent(event) -> None:  # type: ignore[no-untyped-def]
        if event.step == "agent" and event.kind == "step-succeeded":
            ns = ctx.settings.agent.namespace
            seen.append(
                (
                    [e.obj for e in a.store.list(ROLES, ns)],
                    [e.obj for e in a.store.list(ROLEBINDINGS, ns)],
                )
            )
            if ending == "failed":  # as in the test above: both joins refused
                world.behaviours.hosts.refusals.refuse("clusterB", "discovery")
                unsign_tokens(ctx, "clusterA")

    ctx = make_ctx(hooks=[at_the_agent], timeouts={"join": "2s"}, agent=RETURNS)
    if ending == "returned":
        world.behaviours.hosts.refusals.refuse("clusterB", "tls-bootstrap")
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")
    run_request(ctx, request.id)

    assert ctx.store.get(request.id).state.value == ending, ctx.store.get(request.id).outcome
    [(roles, bindings)] = seen
    record = f"joinops-return-{request.id}"
    assert [r["rules"] for r in roles] == [
        [
            {
                "apiGroups": [""],
                "resources": ["configmaps"],
                "resourceNames": [record],
                "verbs": ["get", "patch"],
            }
        ]
    ]
    [binding] = bindings
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": record,
    }
    group = f"system:bootstrappers:joinops:{request.id}"
    assert [s["name"] for s in binding["subjects"]] == [group]
    ns = ctx.settings.agent.namespace
    assert a.store.list(ROLES, ns) == [] and a.store.list(ROLEBINDINGS, ns) == []


def unsign_tokens(ctx, cluster: str) -> None:  # type: ignore[no-untyped-def]
    """The cluster's bootstrap tokens no longer usable for signing: its bootstrap signer drops
    their cluster-info signatures, so kubeadm's discovery refuses them (they still
    authenticate)."""
    api = ctx.clusters.get(cluster).core
    no = base64.b64encode(b"false").decode()
    for s in api.list_namespaced_secret("kube-system").items:
        if s.metadata.name.startswith("bootstrap-token-"):
            api.patch_namespaced_secret(
                s.metadata.name, "kube-system", {"data": {"usage-bootstrap-signing": no}}
            )
