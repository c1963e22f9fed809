"""`joinops migrate` end to end with a real worker; the audit trail, metrics and JSON logs."""

from __future__ import annotations

import json
import socket
import urllib.request

import pytest

from cli import main
from kubesim import NodeSpec
from tests.support.clusters import write_config
from tests.support.engine import start_worker, stop_worker


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def worker(world, tmp_path, redis_client, redis_url, monkeypatch):
    config = write_config(world, tmp_path)
    monkeypatch.setenv("JOINOPS_CONFIG", str(config))
    monkeypatch.setenv("REDIS_URL", redis_url)
    port = free_port()
    process = start_worker(
        config, redis_url, tmp_path / "worker.log", extra_args=["--metrics-port", str(port)]
    )
    yield port, tmp_path / "worker.log"
    stop_worker(process)


def test_migrate_follows_the_job_to_the_end_and_leaves_a_trail(world, worker, capsys):
    port, log = worker
    assert main(["migrate", "a-w-1", "--from", "clusterA", "--to", "clusterB", "--yes"]) == 0
    out = capsys.readouterr().out
    assert "ALLOWED: move a-w-1 from clusterA to clusterB as worker" in out
    for step in ("check", "join-material", "cordon", "drain", "agent", "wait-joined", "cleanup"):
        assert f"ok [{step}]" in out
    assert "SUCCEEDED: `a-w-1` moved from clusterA to clusterB as worker" in out
    assert world.cluster("clusterB").node("a-w-1") is not None

    assert main(["audit", "--json"]) == 0
    trail = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["action"] for e in trail] == ["requested", "approved", "succeeded"]
    assert {e["node"] for e in trail} == {"a-w-1"}
    assert trail[0]["actor"].startswith("cli:")

    metrics = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read()
    text = metrics.decode()
    assert 'joinops_step_duration_seconds_count{outcome="succeeded",step="drain"} 1.0' in text
    assert 'joinops_request_transitions_total{state="succeeded"} 1.0' in text
    assert "joinops_queue_depth 0.0" in text

    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    audit_lines = [line for line in lines if line.get("logger") == "joinops.audit"]
    assert audit_lines and all(line["request_id"] for line in audit_lines)


def test_refused_migration_exits_1_and_changes_nothing(world, worker, capsys):
    world.cluster("clusterB").add_node(NodeSpec("a-w-2"))  # the name is taken in the target
    assert main(["migrate", "a-w-2", "--from", "clusterA", "--to", "clusterB", "--yes"]) == 1
    assert "REFUSED" in capsys.readouterr().out
    assert not world.cluster("clusterA").node("a-w-2")["spec"].get("unschedulable")


def test_without_a_terminal_migrate_asks_for_yes(world, worker, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert main(["migrate", "a-w-1", "--from", "clusterA", "--to", "clusterB"]) == 2
    assert "pass --yes" in capsys.readouterr().err


def test_a_bare_pod_refuses_the_migration_and_leaves_the_node_untouched(world, worker, capsys):
    a = world.cluster("clusterA")
    a.add_pod("a-w-1", "debug", namespace="tools")
    assert main(["migrate", "a-w-1", "--from", "clusterA", "--to", "clusterB", "--yes"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("REFUSED") and "`tools/debug`" in out and "--force" in out
    assert not a.node("a-w-1")["spec"].get("unschedulable")
    assert a.pod("tools", "debug") is not None and world.cluster("clusterB").node("a-w-1") is None


def test_force_moves_the_node_deletes_the_pod_and_is_in_the_trail(world, worker, capsys):
    a = world.cluster("clusterA")
    a.add_pod("a-w-1", "debug", namespace="tools")
    argv = ["migrate", "a-w-1", "--from", "clusterA", "--to", "clusterB", "--force", "--yes"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "ALLOWED: move a-w-1 from clusterA to clusterB as worker (forced)" in out
    assert "deleted for good (forced): `tools/debug`" in out
    assert a.pod("tools", "debug") is None
    assert world.cluster("clusterB").node("a-w-1") is not None

    assert main(["audit", "--json"]) == 0
    trail = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(e["action"], e["force"]) for e in trail] == [
        ("requested", True),
        ("approved", True),
        ("succeeded", True),
    ]
    assert main(["audit"]) == 0
    assert "as worker (forced)" in capsys.readouterr().out


def test_a_forced_batch_records_force_on_every_migration(world, worker, capsys):
    a = world.cluster("clusterA")
    a.add_pod("a-w-1", "debug", namespace="tools")
    argv = ["migrate", "a-w-1", "a-w-2", "--from", "clusterA", "--to", "clusterB", "--yes"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert out.startswith("REFUSED: move 2 nodes") and "tools/debug" in out
    assert main([*argv, "--force"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ALLOWED: move 2 nodes to clusterB (forced)")
    assert a.pod("tools", "debug") is None
    assert {world.cluster("clusterB").node(n) is not None for n in ("a-w-1", "a-w-2")} == {True}
    assert main(["audit", "--json"]) == 0
    trail = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    moved = [e for e in trail if e["action"] == "succeeded" and e["node"] in ("a-w-1", "a-w-2")]
    assert len(moved) == 2 and all(e["force"] for e in moved)


def test_a_batch_over_max_batch_nodes_exits_2_and_creates_nothing(
    world, tmp_path, redis_client, redis_url, monkeypatch, capsys
):
    from joinops.requests.store import RequestStore

    monkeypatch.setenv("JOINOPS_CONFIG", str(write_config(world, tmp_path)))
    monkeypatch.setenv("REDIS_URL", redis_url)
    nodes = [f"node-{i:03d}-abc" for i in range(300)]
    assert main(["migrate", *nodes, "--to", "clusterB", "--yes"]) == 2
    said = capsys.readouterr().err
    assert "that names 300 nodes" in said and "at most 200" in said and "Split it" in said
    assert RequestStore(redis_client).recent(10) == []

    monkeypatch.setenv("JOINOPS_CONFIG", str(write_config(world, tmp_path, max_batch_nodes=2)))
    assert main(["migrate", "--all", "--from", "clusterA", "--to", "clusterB", "--yes"]) == 2
    assert "every node of clusterA is 5 nodes" in capsys.readouterr().err
    assert RequestStore(redis_client).recent(10) == []
