"""Engine gaps closed in issue 14, item 7: each a way a run could leak a token, lose a join in
flight, roll back for a hiccup, or misreport its duration."""

from __future__ import annotations

import re
import time

import pytest
import redis

from joinops.requests.events import EventKind
from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from tests.support.engine import approved_request
from workers.runner import run_request


def _secret_names(cluster, namespace: str) -> list[str]:  # type: ignore[no-untyped-def]
    from kubernetes import client

    core = client.CoreV1Api(cluster.api_client())
    return [s.metadata.name for s in core.list_namespaced_secret(namespace).items]


def test_a_token_whose_create_timed_out_but_succeeded_is_deleted(world, make_ctx):
    b = world.cluster("clusterB")
    # the first token create answers after the client gave up (api: 1s), yet it is created
    b.faults.add(latency_seconds=1.5, path_contains="kube-system/secrets", method="POST")
    ctx = make_ctx(timeouts={"api": "1s"})
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.SUCCEEDED, ctx.store.get(request.id).outcome
    minted = ctx.records.get(request.id, "join-material").data["minted_ids"]
    assert len(minted) == 2  # the timed-out one, and its replacement
    assert [n for n in _secret_names(b, "kube-system") if n.startswith("bootstrap-token-")] == []


def test_a_transient_error_on_the_upload_certs_pod_watch_is_retried_not_rolled_back(
    world, make_ctx
):
    b = world.cluster("clusterB")
    b.faults.add(status=500, path_contains="joinops-system/pods?", method="GET")
    ctx = make_ctx()
    request = approved_request(ctx, "a-cp-3", "clusterA", "clusterB", Role.CONTROL_PLANE)
    assert run_request(ctx, request.id) is State.SUCCEEDED, ctx.store.get(request.id).outcome
    retried = [
        e
        for e in ctx.reporter.events
        if e.kind is EventKind.STEP_RETRYING and e.step == "join-material"
    ]
    assert len(retried) == 1 and "HTTP 500" in retried[0].text


def test_a_resumed_run_never_replaces_the_material_of_a_requested_agent(world, make_ctx):
    a, b = world.cluster("clusterA"), world.cluster("clusterB")
    # the agent pod's create (the source's third pod, after the two probes) answers after the
    # client gave up (api: 1s): it may exist
    a.faults.add(latency_seconds=1.5, path_contains="joinops-system/pods", method="POST", nth=3)
    ctx_holder: list = []

    def material_looks_stale(event) -> None:  # type: ignore[no-untyped-def]
        if event.kind is EventKind.STEP_RETRYING and event.step == "agent":
            ctx_holder[0].records.remember(event.request_id, "join-material", token_expires_at=0)

    ctx = make_ctx(hooks=[material_looks_stale], timeouts={"api": "1s"})
    ctx_holder.append(ctx)
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.SUCCEEDED, ctx.store.get(request.id).outcome
    created = [
        r
        for r in b.requests
        if r.method == "POST" and r.resource == "secrets" and r.namespace == "kube-system"
    ]
    assert len(created) == 1  # the join in flight kept its token: none was made again
    assert world.host("a-w-1").cluster == "clusterB"


def test_the_success_duration_counts_from_the_first_start_after_a_resume_at_check(world, make_ctx):
    offset = [0.0]
    ctx = make_ctx()
    ctx.clock = lambda: time.time() + offset[0]

    def redis_goes_away_in_check(event) -> None:  # type: ignore[no-untyped-def]
        if event.kind is EventKind.STEP_STARTED and event.step == "check" and not offset[0]:
            raise redis.ConnectionError("the state store went away")

    ctx.reporter.hooks.append(redis_goes_away_in_check)
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")
    with pytest.raises(redis.ConnectionError):
        run_request(ctx, request.id)
    offset[0] = 600.0  # resumed ten minutes later, at `check`
    assert run_request(ctx, request.id) is State.SUCCEEDED
    seconds = int(re.search(r"in (\d+) s\.", ctx.store.get(request.id).outcome).group(1))
    assert 600 <= seconds < 660
