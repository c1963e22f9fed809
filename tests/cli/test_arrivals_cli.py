"""`joinops arrivals [--json]`: what the terminal prints about the hosts directory."""

from __future__ import annotations

import json

import pytest

from cli import main
from joinops.arrivals.store import ArrivalStore, State
from tests.arrivals.support import arrivals_config, drop_host
from tests.support.clusters import write_config


@pytest.fixture
def hosts(world, tmp_path, redis_client, redis_url, monkeypatch):  # type: ignore[no-untyped-def]
    directory = tmp_path / "hosts.d"
    overrides = arrivals_config(world, tmp_path, directory, channel="C0ARRIVALS")
    monkeypatch.setenv("JOINOPS_CONFIG", str(write_config(world, tmp_path, **overrides)))
    monkeypatch.setenv("REDIS_URL", redis_url)
    return directory


def test_without_arrivals_configured_it_says_how_to_configure_them(
    world, tmp_path, redis_client, redis_url, monkeypatch, capsys
):
    monkeypatch.setenv("JOINOPS_CONFIG", str(write_config(world, tmp_path)))
    monkeypatch.setenv("REDIS_URL", redis_url)
    assert main(["arrivals"]) == 0
    assert "Arrivals are not configured: set arrivals.directory" in capsys.readouterr().out
    assert main(["arrivals", "--json"]) == 0
    assert capsys.readouterr().out == ""


def test_an_empty_directory_says_so_and_where_hosts_are_announced(hosts, capsys):
    assert main(["arrivals"]) == 0
    out = capsys.readouterr().out
    assert f"No host has been seen in {hosts} yet." in out
    assert "announced in Slack channel C0ARRIVALS when it first answers" in out


def test_each_host_with_its_file_since_when_state_and_request(world, hosts, redis_client, capsys):
    drop_host(world, hosts, "host-1")
    assert main(["arrivals"]) == 0
    header, line, note = capsys.readouterr().out.splitlines()
    assert header.split() == ["CLUSTER", "FILE", "SINCE", "STATE", "REQUEST"]
    assert line.split()[:2] == ["host-1", "host-1.yaml"] and line.split()[-2:] == ["waiting", "-"]
    assert note.strip() == "not recorded by a bot yet (is `joinops serve` running?)"

    store = ArrivalStore(redis_client)  # as the bot's watcher records it, then a Move and success
    seen = store.seen("host-1", "host-1.yaml")
    store.transition("host-1", State.ANNOUNCED, (State.WAITING,))
    store.transition("host-1", State.REQUESTED, (State.ANNOUNCED,), request_id="req-0a1b2c3d")
    store.transition("host-1", State.MOVED, (State.REQUESTED,))
    assert main(["arrivals"]) == 0
    _, line = capsys.readouterr().out.splitlines()
    assert line.split()[-2:] == ["moved", "req-0a1b2c3d"]
    assert main(["arrivals", "--json"]) == 0
    (row,) = [json.loads(text) for text in capsys.readouterr().out.splitlines()]
    assert row == {
        "cluster": "host-1",
        "file": "host-1.yaml",
        "first_seen": seen.first_seen,
        "state": "moved",
        "request_id": "req-0a1b2c3d",
        "note": "",
    }
