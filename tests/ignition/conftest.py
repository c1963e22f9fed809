"""Simulated clusters for Ignition: a target with a shared endpoint and one without."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli import main
from kubesim import NodeSpec, World
from tests.support.clusters import settings_for, write_config
from tests.support.engine import RecordingReporter
from workers import context
from workers.context import EngineContext

SSH_KEY = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB7Yk1S3tq4Qd0DK8mjEI0K5l2AwWJ0LMaQ6e7e4fCxZ ops@example"
)


@pytest.fixture
def world() -> Iterator[World]:
    with World(join_seconds=0.05) as w:
        w.add_cluster(
            "clusterB",
            version="v1.32.2",
            control_plane_endpoint="cp.b.test:6443",
            nodes=[
                NodeSpec("b-cp-1", role="control-plane"),
                NodeSpec("b-cp-2", role="control-plane"),
                NodeSpec("b-w-1"),
            ],
        )
        w.add_cluster(
            "clusterC", version="v1.31.1", nodes=[NodeSpec("c-cp-1", role="control-plane")]
        )
        yield w


@pytest.fixture
def configured(
    world: World,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    redis_url: str,
    redis_client: Any,  # flushed: an earlier test's uploads (workers.certkeys) are not this world's
) -> World:
    monkeypatch.setenv("JOINOPS_CONFIG", str(write_config(world, tmp_path)))
    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.chdir(tmp_path)
    return world


@pytest.fixture
def byo(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Write a byo.yaml (a dict or raw text) next to the test's files; returns its path."""

    def write(content: dict[str, Any] | str, name: str = "byo.yaml") -> Path:
        import yaml

        path = tmp_path / name
        path.write_text(content if isinstance(content, str) else yaml.safe_dump(content))
        return path

    return write


def base_byo(**overrides: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "provider": "byo",
        "name": "mycluster",
        "workerNodes": 2,
        "controlPlaneNodes": 3,
        "virtualIp": "192.168.50.10",
        "providers": {"byo": {"networkInterface": "enp1s0", "automaticTokenCreation": True}},
        "sshPublicKey": SSH_KEY,
    }
    doc.update(overrides)
    return doc


def run_cli(*argv: str) -> tuple[int, str, str]:
    """`joinops ...` in-process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def ignition_of(stdout: str) -> dict[str, Any]:
    return json.loads(stdout)


def writes(world: World, cluster: str) -> list[str]:
    """Every request that changed something in the cluster (anything but a read)."""
    return [
        f"{r.method} {r.path}"
        for r in world.cluster(cluster).requests
        if r.method in ("POST", "PUT", "PATCH", "DELETE")
    ]


@pytest.fixture
def make_ctx(world, tmp_path, redis_client, redis_url):  # type: ignore[no-untyped-def]
    """An engine context on the simulated world, installed for in-process jobs."""

    def make(**overrides: Any) -> EngineContext:
        ctx = EngineContext.from_settings(
            settings_for(world, tmp_path, redis_url=redis_url, **overrides)
        )
        ctx.reporter = RecordingReporter(ctx.redis)
        context.install(ctx)
        return ctx

    yield make
    context.install(None)
