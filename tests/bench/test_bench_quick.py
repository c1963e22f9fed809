"""`python -m bench --quick` on the cheap benchmarks: it runs, and its JSON has the documented
shape. No timing is asserted here: speed targets live in bench/, not in tests."""

from __future__ import annotations

import json

import pytest
import redis

from bench.__main__ import main
from bench.support import Env, fresh_redis, percentile
from tests.support import session_redis

FIGURE_KEYS = {"name", "value", "unit", "compared_to", "verdict"}
RESULT_KEYS = {
    "name",
    "title",
    "params",
    "figures",
    "rows",
    "samples",
    "status",
    "note",
    "seconds",
}
ROW_KEYS = {
    "name",
    "joinops",
    "unit",
    "peer",
    "peer_value",
    "ratio",
    "ratio_kind",
    "target",
    "verdict",
    "note",
}


def test_quick_run_writes_the_table_as_json(tmp_path, capsys):
    assert main(["--quick", "--only", "check_cost,drain", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "latest-quick.json").read_text())
    assert report["schema"] == 2 and report["mode"] == "quick"
    assert set(report["machine"]) == {
        "nproc",
        "cpu",
        "python",
        "system",
        "load_average",
        "load_average_end",
    }
    assert report["machine"]["nproc"] >= 1
    assert [r["name"] for r in report["results"]] == ["check_cost", "drain"]
    for result in report["results"]:
        assert set(result) == RESULT_KEYS
        assert result["status"] == "ok", result["note"]
        assert result["figures"]
        for figure in result["figures"]:
            assert set(figure) == FIGURE_KEYS
            assert isinstance(figure["value"], int | float)
            assert figure["compared_to"]
        assert result["rows"]
        for row in result["rows"]:
            assert set(row) == ROW_KEYS
            assert isinstance(row["joinops"], int | float) and row["peer"]
    check = report["results"][0]
    assert [c["nodes"] for c in check["samples"]["costs"]] == [10, 1000]
    drain = report["results"][1]["samples"]
    assert len(drain["joinops_seconds"]) == 2 and len(drain["baseline_seconds"]) == 1
    dated = sorted(p.name for p in tmp_path.iterdir())
    assert any(n.endswith("-quick.json") and n[:4].isdigit() for n in dated)
    assert any(n.endswith("-quick.md") for n in dated)
    check_rows = {r["name"]: r for r in check["rows"]}
    requests = check_rows["check of a control-plane move, 1,000 nodes: requests"]
    assert requests["target"] == {"on": "joinops", "op": "<=", "bound": 10, "unit": "requests"}
    assert requests["verdict"] in ("met", f"missed by {requests['joinops'] - 10} requests")
    drain_rows = report["results"][1]["rows"]
    assert drain_rows[0]["ratio_kind"] == "faster"
    assert drain_rows[0]["ratio"] == drain_rows[0]["peer_value"] / drain_rows[0]["joinops"]
    table = capsys.readouterr().out
    assert "| Row | joinops | Peer or floor (same run) | Ratio | Target | Verdict |" in table
    assert "| check of a control-plane move, 1,000 nodes: requests |" in table
    assert "| Benchmark | Figure | joinops | Compared against | Verdict |" in table


def test_unknown_benchmark_is_a_usage_error(tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        main(["--only", "nope", "--out", str(tmp_path)])
    assert exit_info.value.code == 2


def test_percentile_is_nearest_rank():
    values = list(range(1, 501))  # 1..500
    assert percentile(values, 50) == 250
    assert percentile(values, 99) == 495
    assert percentile(values, 100) == 500
    assert percentile([7.0], 99) == 7.0


def test_without_a_named_database_the_benchmarks_flush_a_private_redis_and_stop_it(monkeypatch):
    monkeypatch.delenv("JOINOPS_BENCH_REDIS_URL", raising=False)
    env = Env(quick=True)
    url = env.redis_url
    assert url != session_redis.url()
    keep = redis.Redis.from_url(session_redis.url())
    keep.set("a user's key", "kept")
    fresh_redis(url).close()  # what a benchmark does first: empty its database
    assert keep.get("a user's key") == b"kept"
    env.close()
    with pytest.raises(redis.ConnectionError):
        redis.Redis.from_url(url, socket_connect_timeout=5).ping()
    keep.delete("a user's key")
    keep.close()


def test_a_named_database_is_the_one_used(monkeypatch, redis_url):
    monkeypatch.setenv("JOINOPS_BENCH_REDIS_URL", redis_url)
    env = Env(quick=True)
    assert env.redis_url == redis_url
    env.close()
