"""One certificate key per target at a time (issue 31, item 4).

kubesim models what kubeadm does: `kubeadm init phase upload-certs` replaces
`kube-system/kubeadm-certs`, encrypted under the new key, so only the latest key decrypts them
(cmd/kubeadm/app/phases/copycerts/copycerts.go, `UploadCerts`; kubesim `uploaded_cert_keys`).
A control-plane Ignition file carries its key for up to two hours: a migration into the same
target meanwhile must not upload again, or the file's host could no longer join.
"""

from __future__ import annotations

import json
import time

from joinops.ignition import request as ir
from joinops.ignition.config import KUBEADM_CONF, join_configuration_of
from joinops.ignition.files import file_contents
from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from kubesim import NodeSpec
from kubesim.boot import boot_host
from tests.ignition.conftest import base_byo
from tests.ignition.test_ignition_cli import wait_ready
from tests.ignition.test_ignition_job import approved
from tests.support.engine import approved_request
from workers.ignition.job import generate_ignition
from workers.runner import run_request


def _source(world):  # type: ignore[no-untyped-def]
    return world.add_cluster(
        "clusterS",
        version="v1.32.2",
        nodes=[NodeSpec(f"s-cp-{i}", role="control-plane") for i in (1, 2, 3)],
    )


def test_a_migration_during_a_valid_ignition_key_leaves_the_files_join_working(world, make_ctx):
    _source(world)
    b = world.cluster("clusterB")
    ctx = make_ctx()
    ignition = approved(ctx, Role.CONTROL_PLANE, base_byo())
    assert generate_ignition(ignition.id) == "succeeded"
    keys = dict(b.uploaded_cert_keys)
    valid_until = float(ctx.store.get(ignition.id).extra[ir.VALID_UNTIL])

    move = approved_request(ctx, "s-cp-3", "clusterS", "clusterB", Role.CONTROL_PLANE)
    assert run_request(ctx, move.id) is State.FAILED
    refused = ctx.store.get(move.id)
    assert refused.failed_step == "check"
    assert ignition.id in refused.outcome
    assert time.strftime("%H:%M", time.gmtime(valid_until)) in refused.outcome
    assert b.uploaded_cert_keys == keys  # nothing uploaded over the file's key
    assert world.host("s-cp-3").cluster == "clusterS"  # and nothing done to the node

    config = json.loads(ir.fetch_file(ctx.redis, ignition.id) or b"{}")
    boot_host(
        world, "late-cp-1", file_contents(config, KUBEADM_CONF).decode(), kubelet_version="v1.32.2"
    )
    wait_ready(world, "clusterB", "late-cp-1")
    assert join_configuration_of(config)["controlPlane"]["certificateKey"] in b.uploaded_cert_keys


def test_a_second_control_plane_ignition_is_refused_with_the_time_it_frees_up(world, make_ctx):
    ctx = make_ctx()
    first = approved(ctx, Role.CONTROL_PLANE, base_byo())
    assert generate_ignition(first.id) == "succeeded"
    keys = dict(world.cluster("clusterB").uploaded_cert_keys)
    second = approved(ctx, Role.CONTROL_PLANE, base_byo())
    assert generate_ignition(second.id) == "failed"
    outcome = ctx.store.get(second.id).outcome
    assert first.id in outcome and "Ask again after" in outcome
    assert world.cluster("clusterB").uploaded_cert_keys == keys
    # a worker's file needs no upload: it is made as before
    assert generate_ignition(approved(ctx, Role.WORKER).id) == "succeeded"


def test_once_the_file_can_no_longer_join_a_migration_uploads_again(world, make_ctx):
    _source(world)
    b = world.cluster("clusterB")
    ctx = make_ctx()
    ignition = approved(ctx, Role.CONTROL_PLANE, base_byo())
    assert generate_ignition(ignition.id) == "succeeded"
    valid_until = float(ctx.store.get(ignition.id).extra[ir.VALID_UNTIL])
    later = valid_until + 1.0 - time.time()
    ctx.clock = lambda: time.time() + later  # the file's token has expired: it joins no more
    move = approved_request(ctx, "s-cp-3", "clusterS", "clusterB", Role.CONTROL_PLANE)
    assert run_request(ctx, move.id) is State.SUCCEEDED, ctx.store.get(move.id).outcome
    assert world.host("s-cp-3").cluster == "clusterB"
    assert len(b.uploaded_cert_keys) == 1  # the migration's own key replaced the file's
