"""The engine side of the Slack path: `generate_ignition` as an RQ job, in-process."""

from __future__ import annotations

import json
from datetime import timedelta

import yaml
from rq import SimpleWorker

from joinops.ignition import request as ir
from joinops.ignition.config import KUBEADM_CONF, join_configuration_of, sha256
from joinops.ignition.files import file_contents
from joinops.ignition.validate import problems
from joinops.queue import IGNITION, enqueue_ignition, queue
from joinops.requests.events import EventKind, RedisEventLog
from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from kubesim.boot import boot_host
from kubesim.resources import SECRETS
from tests.ignition.conftest import base_byo, writes
from tests.ignition.test_ignition_cli import wait_ready
from workers.ignition.job import generate_ignition


def approved(ctx, role=Role.WORKER, byo=None, ttl=timedelta(hours=1)):  # type: ignore[no-untyped-def]
    return ctx.store.create(
        ir.new_request(
            cluster="clusterB",
            role=role,
            requester="UREQUESTER",
            ttl=ttl,
            byo_text=yaml.safe_dump(byo) if byo else "",
            state=State.APPROVED,
            decided_by="UAPPROVER1",
        )
    )


def test_the_job_stores_the_file_and_records_its_sha256(world, make_ctx):
    ctx = make_ctx()
    request = approved(ctx, Role.CONTROL_PLANE, base_byo())
    assert generate_ignition(request.id) == "succeeded"

    data = ir.fetch_file(ctx.redis, request.id)
    assert data is not None
    assert 0 < ctx.redis.ttl(ir.file_key(request.id)) <= ir.DELIVERY_TTL
    config = json.loads(data)
    assert problems(config) == []

    done = ctx.store.get(request.id)
    assert done.state is State.SUCCEEDED
    assert done.extra[ir.SHA256] == sha256(data)
    assert int(done.extra[ir.SIZE]) == len(data)
    valid_until = float(done.extra[ir.VALID_UNTIL])
    assert valid_until == min(
        float(done.extra[ir.TOKEN_EXPIRES_AT]), float(done.extra[ir.CERTS_EXPIRE_AT])
    )
    assert done.outcome.startswith("Ignition ready: valid until ")
    assert done.outcome.endswith(f"sha256 {sha256(data)}")

    events = RedisEventLog(ctx.redis).history(request.id)
    final = events[-1]
    assert final.kind is EventKind.STATE and final.state == "succeeded"
    assert final.text == done.outcome

    # Nothing secret in any event the bot would relay into the channel.
    join = join_configuration_of(config)
    secret = join["discovery"]["bootstrapToken"]["token"].split(".")[1]
    key = join["controlPlane"]["certificateKey"]
    for event in events:
        assert secret not in event.text and key not in event.text
    assert secret not in json.dumps(done.to_hash()) and key not in json.dumps(done.to_hash())

    # The file works: a fresh host booted with it joins as a control plane.
    boot_host(
        world, "slack-cp-1", file_contents(config, KUBEADM_CONF).decode(), kubelet_version="v1.32.2"
    )
    wait_ready(world, "clusterB", "slack-cp-1")
    # The control-plane lock was released.
    assert ctx.redis.get("joinops:lock:control-plane:clusterB") is None


def test_the_job_runs_from_the_queue_by_name(world, make_ctx):
    ctx = make_ctx()
    request = approved(ctx)
    assert IGNITION == "workers.ignition.job.generate_ignition"
    assert enqueue_ignition(ctx.redis, ctx.settings, request.id)
    assert not enqueue_ignition(ctx.redis, ctx.settings, request.id)  # already queued
    SimpleWorker([queue(ctx.redis)], connection=ctx.redis).work(burst=True)
    assert ctx.store.get(request.id).state is State.SUCCEEDED
    assert ir.fetch_file(ctx.redis, request.id) is not None


def test_a_bad_byo_configuration_fails_the_request_and_creates_nothing(world, make_ctx):
    ctx = make_ctx()
    world.cluster("clusterB").reset_requests()
    bad = {k: v for k, v in base_byo().items() if k != "virtualIp"}
    request = approved(ctx, byo=bad)
    assert generate_ignition(request.id) == "failed"
    done = ctx.store.get(request.id)
    assert "neither virtualIp nor loadBalancer is set" in done.outcome
    assert done.failed_step == "ignition"
    assert writes(world, "clusterB") == []
    assert ir.fetch_file(ctx.redis, request.id) is None


def test_paths_in_a_stored_configuration_need_a_directory(world, make_ctx):
    ctx = make_ctx()
    cfg = {**{k: v for k, v in base_byo().items() if k != "sshPublicKey"}}
    cfg["sshPublicKeyPath"] = "id.pub"
    request = approved(ctx, byo=cfg)
    assert generate_ignition(request.id) == "failed"
    assert "no directory to take it from" in ctx.store.get(request.id).outcome


def test_a_failed_upload_leaves_no_token(world, make_ctx):
    ctx = make_ctx()
    # The upload pod cannot be created: the token made just before must go again.
    cluster = world.cluster("clusterB")
    cluster.faults.add(status=403, method="POST", path_contains="/pods", times=None)
    request = approved(ctx, Role.CONTROL_PLANE, base_byo())
    assert generate_ignition(request.id) == "failed"
    assert "may not create pods" in ctx.store.get(request.id).outcome
    tokens = [
        e.meta["name"]
        for e in cluster.store.list(SECRETS, "kube-system")
        if e.meta["name"].startswith("bootstrap-token-")
    ]
    assert tokens == []
    assert ctx.redis.get("joinops:lock:control-plane:clusterB") is None


def test_only_approved_ignition_requests_run(world, make_ctx):
    ctx = make_ctx()
    pending = ctx.store.create(ir.new_request(cluster="clusterB", requester="U1"))
    assert generate_ignition(pending.id) == "pending"
    assert writes(world, "clusterB") == []
    assert generate_ignition("req-00000000") == "missing"
