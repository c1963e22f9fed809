"""What a migration asks the API servers, and how often (issue 34: with many migrations at once
the workers and API servers are CPU-bound, and every request costs both).

- The join material is built from the check's own reading of the target (version,
  kubeadm-config, control planes) and of the node, taken moments before in the same run; a
  retry, a later step, and the next request read afresh (nothing is kept across requests:
  joinops/clusters/steady.py says why).
- joinops's short-lived pods (the host facts and probe pods, the node agent, the pod check) are
  created in one request and watched from their creation, as a controller watches from the
  resourceVersion a create answered: no list first, no delete "just in case" before, no GET
  after. A probe pod is watched from its creation to its end in one watch.
- A pod of that name left by an interrupted run answers the create 409 (AlreadyExists) and is
  replaced; the first such pod in a cluster without the agent namespace answers 404 (the
  namespace is not found, as kube-apiserver's NamespaceLifecycle admission answers) and the
  namespace is made first.
"""

from __future__ import annotations

from joinops.requests.lifecycle import State
from kubesim.cluster import Cluster
from tests.support.engine import approved_request
from tests.support.faults import AGENT_NAMESPACE, leftovers
from workers import agent
from workers.runner import run_request

NODE = "a-w-1"


def gets(cluster: Cluster, path: str) -> int:
    return sum(1 for r in cluster.requests if r.method == "GET" and r.path.rstrip("/") == path)


def pod_requests(cluster: Cluster) -> list[tuple[str, str, int]]:
    """(verb, pod, status) of each request about the agent namespace's pods, in order: a
    watch is a list asked with `watch=true`; a create names no pod in its path ("")."""
    found = []
    for r in cluster.requests:
        if r.namespace != AGENT_NAMESPACE or r.resource != "pods":
            continue
        verb = "watch" if r.query.get("watch") == "true" else r.verb
        selected = r.query.get("fieldSelector", "").removeprefix("metadata.name=")
        found.append((verb, r.name or selected, r.status))
    return found


def test_the_material_is_built_from_the_checks_reading_and_each_request_reads_again(
    world, make_ctx
):  # type: ignore[no-untyped-def]
    b = world.cluster("clusterB")
    ctx = make_ctx()
    for node in (NODE, "a-w-2"):
        request = approved_request(ctx, node, "clusterA", "clusterB")
        b.reset_requests()  # the approval's own check read the target too
        assert run_request(ctx, request.id) is State.SUCCEEDED, ctx.store.get(request.id).outcome
        # the check's reading, used by the join material: once per run, each run its own
        assert gets(b, "/version") == 1
        assert gets(b, "/api/v1/namespaces/kube-system/configmaps/kubeadm-config") == 1


def test_a_retried_join_material_reads_the_target_afresh(world, make_ctx):  # type: ignore[no-untyped-def]
    b = world.cluster("clusterB")
    # the token's Secret is refused once (a 500): the step's second attempt starts over
    b.faults.add(status=500, path_contains="/namespaces/kube-system/secrets", method="POST")
    ctx = make_ctx()
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    b.reset_requests()
    assert run_request(ctx, request.id) is State.SUCCEEDED, ctx.store.get(request.id).outcome
    assert gets(b, "/version") == 2  # the check's reading, then the retry's own


def test_joinops_pods_are_created_once_and_watched_from_their_creation(world, make_ctx):  # type: ignore[no-untyped-def]
    a, b = world.cluster("clusterA"), world.cluster("clusterB")
    ctx = make_ctx()
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.SUCCEEDED, ctx.store.get(request.id).outcome

    facts, probe = agent.facts_pod_name(request.id), agent.probe_pod_name(request.id)
    agent_pod, check_pod = agent.agent_pod_name(request.id), agent.check_pod_name(request.id)
    # each probe pod: one watch from its creation to its end (its report is in that status)
    source = pod_requests(a)
    assert source[:8] == [
        ("create", "", 201),
        ("watch", facts, 200),
        ("delete", facts, 200),
        ("create", "", 201),
        ("watch", probe, 200),
        ("delete", probe, 200),
        ("create", "", 201),
        ("watch", agent_pod, 200),
    ]
    # the clean-up's (200, or 404 once gone with its node)
    assert [(verb, pod) for verb, pod, _ in source[8:]] == [("delete", agent_pod)]
    # clusterB had no agent namespace: the first create was refused (404), then it was made
    assert pod_requests(b) == [
        ("create", "", 404),
        ("create", "", 201),
        ("watch", check_pod, 200),
        ("delete", check_pod, 200),
    ]
    assert b.namespace(AGENT_NAMESPACE) is not None
    assert leftovers([a, b]) == []


def test_a_probe_pod_left_by_an_interrupted_run_is_replaced(world, make_ctx):  # type: ignore[no-untyped-def]
    a = world.cluster("clusterA")
    ctx = make_ctx()
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    facts = agent.facts_pod_name(request.id)
    a.add_namespace(AGENT_NAMESPACE)
    # the earlier run's, as it created it (joinops's labels: not a pod the drain must move)
    a.add_pod(NODE, facts, AGENT_NAMESPACE, agent.labels(request.id, "facts"), phase="Pending")
    a.reset_requests()

    assert run_request(ctx, request.id) is State.SUCCEEDED, ctx.store.get(request.id).outcome
    assert pod_requests(a)[:4] == [
        ("create", "", 409),  # AlreadyExists: the earlier run's pod
        ("delete", facts, 200),
        ("create", "", 201),
        ("watch", facts, 200),
    ]
    assert leftovers([a, world.cluster("clusterB")]) == []


def test_a_watch_from_a_creation_etcd_compacted_away_lists_again(world, make_ctx):  # type: ignore[no-untyped-def]
    a = world.cluster("clusterA")
    # etcd compacts right before the first watch (the API server's compactor, every 5 min):
    # the watch from the facts pod's creation gets a 410 "too old resource version" ERROR event
    a.faults.add_compaction(path_contains="watch=true")
    ctx = make_ctx()
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    a.reset_requests()

    assert run_request(ctx, request.id) is State.SUCCEEDED, ctx.store.get(request.id).outcome
    facts = agent.facts_pod_name(request.id)
    assert [(verb, pod) for verb, pod, _ in pod_requests(a)[:3]] == [
        ("create", ""),
        ("watch", facts),  # answered with the ERROR event
        ("list", facts),  # then the state afresh, as a reflector does
    ]
