"""With Redis down, every command that needs it says so in one line, never a traceback."""

from __future__ import annotations

import socket

import pytest

from cli import main
from tests.cli.workers import config  # noqa: F401  (fixture)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    "argv",
    [
        ["list"],
        ["status"],
        ["migrate", "a-w-1", "--from", "clusterA", "--to", "clusterB", "--yes", "--no-follow"],
        ["worker", "--burst"],
    ],
)
def test_a_command_needing_redis_says_where_it_looked_and_exits_1(
    argv,
    config,  # noqa: F811
    monkeypatch,
    capsys,
):
    port = closed_port()
    monkeypatch.setenv("REDIS_URL", f"redis://:hunter2@127.0.0.1:{port}/0")
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert f"joinops: cannot reach Redis at 127.0.0.1:{port}" in err
    assert "point REDIS_URL at one" in err
    assert "hunter2" not in err and "Traceback" not in err


def test_migrate_asks_redis_before_any_cluster(world, config, monkeypatch, capsys):  # noqa: F811
    """Redis down is said at once, not after a plan that could never be queued."""
    port = closed_port()
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{port}/0")
    clusters = [world.cluster(name) for name in ("clusterA", "clusterB")]
    for cluster in clusters:
        cluster.reset_requests()
    assert main(["migrate", "a-w-1", "--from", "clusterA", "--to", "clusterB", "--yes"]) == 1
    said = capsys.readouterr()
    assert said.out == ""  # no plan
    assert f"joinops: cannot reach Redis at 127.0.0.1:{port} (Connection refused)" in said.err
    assert [c.requests for c in clusters] == [[], []]  # no cluster was read


def test_health_says_which_redis_and_what_failed(monkeypatch, capsys):
    port = closed_port()
    monkeypatch.setenv("REDIS_URL", f"redis://:hunter2@127.0.0.1:{port}/0")
    assert main(["health"]) == 1
    err = capsys.readouterr().err
    assert f"joinops: cannot reach Redis at 127.0.0.1:{port} (Connection refused)" in err
    assert "hunter2" not in err and "ConnectionError" not in err
