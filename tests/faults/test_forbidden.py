"""A 403 (credentials lacking one permission) is reported at once, naming what is missing."""

from __future__ import annotations

import pytest

from joinops.requests.lifecycle import State
from tests.support.engine import approved_request
from tests.support.faults import finals, leftovers, node_ready
from workers.runner import run_request

NODE = "a-w-1"
PODS = ["web-0", "web-1", "web-2"]


@pytest.mark.parametrize(
    ("cluster", "resource", "step", "named"),
    [
        # the drain's evictions, in the source
        ("clusterA", "pods/eviction", "drain", "may not create pods/web-"),
        # the Secret that carries the JoinConfiguration to the agent, in the source
        ("clusterA", "secrets", "join-material", "may not create secrets/joinops-join-"),
        # the bootstrap token, in the target
        ("clusterB", "secrets", "join-material", "may not create secrets/bootstrap-token-"),
    ],
    ids=["evictions-in-source", "secrets-in-source", "token-in-target"],
)
def test_a_permission_denied_is_reported_at_once_and_the_node_left_as_it_was(
    cluster, resource, step, named, world, make_ctx
):
    a, b = world.cluster("clusterA"), world.cluster("clusterB")
    for name in PODS:
        a.add_pod(NODE, name, labels={"app": "web"}, owner_kind="ReplicaSet")
    ctx = make_ctx(timeouts={"drain": "60s"})
    # the agent's Secret alone: a source refusing the return token too (kube-system) lets the
    # move go on without a way back (tests/engine/test_join_return_forgone.py)
    agents_secret = (cluster, resource) == ("clusterA", "secrets")
    namespace = ctx.settings.agent.namespace if agents_secret else None
    world.cluster(cluster).rbac.deny("create", resource, namespace)
    request = approved_request(ctx, NODE, "clusterA", "clusterB")

    assert run_request(ctx, request.id) is State.FAILED

    # at once: each refused call made once, never retried, and no step tried again (what the
    # drain's 60 s would have been spent on); the outcome is the refusal, not a timeout
    history = ctx.reporter.history(request.id)
    assert not [e for e in history if e.kind == "step-retrying"]
    refused = [r for r in world.cluster(cluster).requests if r.status == 403]
    expected = len(PODS) if step == "drain" else 1  # each refused call made once
    assert len(refused) == expected, [(r.method, r.path) for r in refused]
    assert len({r.path for r in refused}) == expected  # not one of them twice

    # what is missing, on which cluster, and where the node is
    final = ctx.store.get(request.id)
    assert final.failed_step == step
    assert len(finals(history)) == 1 and finals(history)[0].text == final.outcome
    assert f"the credentials for {cluster} {named}" in final.outcome
    assert f'cannot create resource "{resource}"' in final.outcome
    if step == "drain":
        assert "/eviction (" in final.outcome
        assert "disruption budget" not in final.outcome
    assert f"`{NODE}` is still in clusterA" in final.outcome

    # the node as it was: schedulable, Ready, its pods on it; nothing left behind
    assert node_ready(a, NODE) and not a.node(NODE)["spec"].get("unschedulable")
    assert sorted(p["metadata"]["name"] for p in a.pods(node=NODE)) == PODS
    assert b.node(NODE) is None
    assert leftovers([a, b]) == []
