"""The real engine, against simulated clusters that enforce deploy/managed-cluster-rbac.yaml.

Every migration path works under exactly those rules, with agent.return_to_source off and on
(nothing was refused with 403), and every request the engine made is one of the calls listed
in deploy/api-calls.yaml — so the list that test_rbac.py checks the manifest against is the
truth, not a guess.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from joinops.settings import DEFAULT_CHECK_IMAGE
from kubesim import NodeSpec, World
from tests.deploy.deploy_rbac import ALL_NAMESPACES, MANIFEST, load_calls, load_documents
from tests.deploy.deploy_rbac import policy_from_manifest as manifest_policy
from tests.support.clusters import add_standard_clusters, settings_for
from tests.support.csrs import csrs_held_until_listed
from tests.support.engine import approved_request
from workers import context
from workers.context import EngineContext
from workers.runner import run_request


@pytest.fixture
def world() -> Iterator[World]:
    # a signer slower than the steps before the agent: the agent watches for the signature
    with World(signer_delay_seconds=1.0) as w:
        add_standard_clusters(w)
        # its kubelets ask for serving certificates: the clean-up approves the moved node's,
        # which comes only once joinops looked for it (so it watches for it too)
        w.cluster("clusterB").set_kubelet_config(server_tls_bootstrap=True)
        rules, namespace_rules = manifest_policy(load_documents(MANIFEST)).simulator_rules()
        for cluster in w.clusters.values():
            cluster.rbac.set_rules(rules, namespace_rules=namespace_rules)
        with csrs_held_until_listed(w, w.cluster("clusterB")):
            yield w


def listed(record, calls) -> bool:  # type: ignore[no-untyped-def]
    resource = record.resource + (f"/{record.subresource}" if record.subresource else "")
    for call in calls:
        if call.url or call.verb != record.verb or call.resource != resource:
            continue
        if call.namespace in (ALL_NAMESPACES, record.namespace) or (
            call.namespace == "" and not record.namespace
        ):
            return True
    return False


def test_every_migration_path_runs_under_the_manifest_and_the_call_list_is_complete(
    world, tmp_path, redis_client, redis_url
):
    a = world.cluster("clusterA")
    a.add_pod("a-w-1", "web-0", labels={"app": "web"}, owner_kind="ReplicaSet")
    a.add_pod("a-w-2", "db-0", labels={"app": "db"}, owner_kind="StatefulSet")
    a.add_pdb("db", "default", {"app": "db"}, min_available=1)
    a.add_pod("a-w-1", "logs", owner_kind="DaemonSet")  # pod safety reads DaemonSets
    claim = {"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "cache"}}]}
    a.add_pod("a-w-1", "cache-0", owner_kind="ReplicaSet", spec=claim)  # ... and volumes
    a.add_pod("a-w-2", "multi-0", labels={"app": "multi"}, owner_kind="ReplicaSet")
    a.add_pdb("multi-a", "default", {"app": "multi"}, min_available=0)  # a 500: budgets listed
    a.add_pdb("multi-b", "default", {"app": "multi"}, min_available=0)
    # a node that joins but cannot run a pod (the pause image cannot be pulled there): the
    # pod check reads why from the events
    a.add_node(NodeSpec("a-w-3"))
    world.host("a-w-3").unpullable_images.add(DEFAULT_CHECK_IMAGE)
    a.add_node(NodeSpec("a-w-4"))
    a.add_node(NodeSpec("a-w-5"))
    # the tests' lock ttl is 2 s (a killed worker's locks free quickly); seven migrations run
    # here inline, beside the simulated clusters' server threads in one interpreter, and on a
    # loaded CI machine the heartbeat renewing them was starved past 2 s twice: locks lost, run
    # stopped. Nothing here kills a worker: a ttl a starved heartbeat cannot miss
    lock = "30s"
    ctx = EngineContext.from_settings(
        settings_for(
            world, tmp_path, redis_url, timeouts={"drain": "1s", "pod_check": "1s", "lock": lock}
        )
    )
    context.install(ctx)
    try:
        moves = [
            ("a-w-1", "clusterA", Role.WORKER, State.SUCCEEDED),
            ("a-cp-3", "clusterA", Role.CONTROL_PLANE, State.SUCCEEDED),
            ("node-1", "host-1", Role.CONTROL_PLANE, State.SUCCEEDED),
            ("a-w-2", "clusterA", Role.WORKER, State.FAILED),
            ("a-w-3", "clusterA", Role.WORKER, State.FAILED),
        ]  # drain fails (two budgets select a pod, another blocks): rollback; no pod on a-w-3
        for node, source, role, expected in moves:
            request = approved_request(ctx, node, source, "clusterB", role)
            assert run_request(ctx, request.id) is expected, ctx.store.get(request.id).outcome
        # agent.return_to_source (off by default): the return record, its Role and RoleBinding;
        # a move that succeeds, and one whose join the target refuses and that returns
        back = EngineContext.from_settings(
            settings_for(
                world,
                tmp_path,
                redis_url,
                agent={"return_to_source": True},
                timeouts={"lock": lock},
            )
        )
        context.install(back)
        for node, expected in (("a-w-4", State.SUCCEEDED), ("a-w-5", State.RETURNED)):
            if expected is State.RETURNED:
                world.behaviours.hosts.refusals.refuse("clusterB", "tls-bootstrap")
            request = approved_request(back, node, "clusterA", "clusterB", Role.WORKER)
            assert run_request(back, request.id) is expected, back.store.get(request.id).outcome
    finally:
        context.install(None)

    records = [r for c in world.clusters.values() for r in c.requests]
    assert not [r for r in records if r.status in (401, 403)]
    calls = load_calls()
    unlisted = {
        f"{r.verb} {r.resource}/{r.subresource} in {r.namespace or '-'}"
        for r in records
        if r.resource and not listed(r, calls)
    }
    assert unlisted == set()
    used = {
        (c.verb, c.resource) for c in calls if not c.url if any(listed(r, [c]) for r in records)
    }
    # `approve` on a signer is checked inside the approval update, never requested on its own
    listed_calls = {(c.verb, c.resource) for c in calls if not c.url and c.verb != "approve"}
    assert listed_calls - used == set(), "calls listed but never made: grant less"
