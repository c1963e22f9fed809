"""A source that will not let the way back be prepared does not stop the move (issue 35).

A real kube-apiserver answers 403 to a create its RBAC does not grant: joinops's grant on the
source may predate `agent.return_to_source` (deploy/managed-cluster-rbac.yaml gained roles and
rolebindings in the agent namespace with it). The move then goes on as it did before returns
existed, the thread says the node cannot come back by itself, and nothing of the return stays
behind in the source. kubesim refuses those creates as RBAC would (`rbac.deny`).
"""

from __future__ import annotations

from joinops.requests.events import RedisEventLog
from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from kubesim.resources import CONFIGMAPS, ROLEBINDINGS, ROLES, SECRETS
from tests.engine.test_join_return import RETURNS
from tests.engine.test_migration import joinops_leftovers, node_ready
from tests.support.engine import approved_request
from workers import agent
from workers.runner import run_request


def _return_objects(cluster, namespace: str, request_id: str) -> list[str]:  # type: ignore[no-untyped-def]
    name = agent.return_record_name(request_id)
    found = [
        f"{kind}/{name}"
        for kind, resource in (("role", ROLES), ("rolebinding", ROLEBINDINGS))
        if any(e.obj["metadata"]["name"] == name for e in cluster.store.list(resource, namespace))
    ]
    found += [
        f"configmap/{name}"
        for e in cluster.store.list(CONFIGMAPS, namespace)
        if e.obj["metadata"]["name"] == name
    ]
    tokens = [
        e.obj["metadata"]["name"]
        for e in cluster.store.list(SECRETS, "kube-system")
        if e.obj["metadata"].get("labels", {}).get("joinops.io/request") == request_id
    ]
    return found + tokens


def test_a_source_refusing_the_grant_moves_the_node_without_a_way_back(world, make_ctx):
    a, b = world.cluster("clusterA"), world.cluster("clusterB")
    ctx = make_ctx(agent=RETURNS)
    namespace = ctx.settings.agent.namespace
    a.rbac.deny("create", "rolebindings", namespace)  # as an older grant answers: 403
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")

    assert run_request(ctx, request.id) is State.SUCCEEDED, ctx.store.get(request.id).outcome

    assert node_ready(b, "a-w-1")
    said = " ".join(e.text for e in RedisEventLog(ctx.redis).history(request.id))
    assert "No way back into clusterA could be prepared (" in said
    assert "if the join into clusterB fails, `a-w-1` will not return by itself." in said
    assert _return_objects(a, namespace, request.id) == []
    assert joinops_leftovers(ctx, "clusterA", "clusterB") == []


def test_a_join_that_fails_without_a_way_back_fails_as_before(world, make_ctx):
    """No return material was prepared, so the agent ran the plain unit: the node is reset and
    in neither cluster, and the outcome says where it is and what to do, as without returns."""
    a = world.cluster("clusterA")
    ctx = make_ctx(agent=RETURNS, timeouts={"join": "2s"})
    a.rbac.deny("create", "roles", ctx.settings.agent.namespace)
    world.behaviours.hosts.refusals.refuse("clusterB", "tls-bootstrap")
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB", Role.WORKER)

    assert run_request(ctx, request.id) is State.FAILED

    final = ctx.store.get(request.id)
    assert "back in clusterA" not in final.outcome
    assert not node_ready(a, "a-w-1")
    assert _return_objects(a, ctx.settings.agent.namespace, request.id) == []
