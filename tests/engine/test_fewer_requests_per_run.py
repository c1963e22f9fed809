"""More of what a migration need not ask (issue 34), each cut standing for how the API server
answers: a first join material has nothing of an earlier attempt to delete; the agent step
reads the target's cluster-info once (the material's freshness check and the last check before
the agent are moments apart in the same step); the wait for the join is one watch asked with
no resourceVersion, which kube-apiserver begins with the node as it is ("get state and start
at most recent"), not a list and then a watch."""

from __future__ import annotations

from joinops.requests.lifecycle import State
from tests.support.engine import approved_request
from workers.runner import run_request

NODE = "a-w-1"
CLUSTER_INFO = "/api/v1/namespaces/kube-public/configmaps/cluster-info"


def test_a_first_run_deletes_nothing_before_its_material_and_reads_cluster_info_once_a_step(
    world, make_ctx
):  # type: ignore[no-untyped-def]
    a, b = world.cluster("clusterA"), world.cluster("clusterB")
    ctx = make_ctx()
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    a.reset_requests()
    b.reset_requests()
    assert run_request(ctx, request.id) is State.SUCCEEDED, ctx.store.get(request.id).outcome

    first_create = next(i for i, r in enumerate(a.requests) if r.verb == "create")
    assert [r.path for r in a.requests[:first_create] if r.verb == "delete"] == []
    # the check's, the join material's (its pins), the agent step's
    assert sum(1 for r in b.requests if r.method == "GET" and r.path == CLUSTER_INFO) == 3
    # the wait for the join: the node by name, watched only, from no resourceVersion
    by_name = [r for r in b.requests if "metadata.name" in r.query.get("fieldSelector", "")]
    assert by_name and all(r.verb == "watch" for r in by_name)
    assert by_name[0].query.get("resourceVersion") == ""
