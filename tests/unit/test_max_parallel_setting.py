"""`max_parallel`: `auto` (the default) or a number; what `auto` chooses from the target's join
admission and the live workers; a bad value is one clear line naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli import main
from joinops import parallelism
from joinops.errors import ConfigError
from joinops.settings import Settings, load_settings

CLUSTERS = "clusters:\n  clusterA: {kubeconfig: /etc/joinops/clusterA.kubeconfig}\n"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("JOINOPS_CONFIG", "KUBECONFIG", "SLACK_BOT_TOKEN", "SLACK_API_URL", "REDIS_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))


def settings_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> Settings:
    path = tmp_path / "joinops.yaml"
    path.write_text(CLUSTERS + text)
    monkeypatch.setenv("JOINOPS_CONFIG", str(path))
    return load_settings()


def test_auto_is_the_default_and_its_limits_are_read(tmp_path, monkeypatch):
    default = settings_from(tmp_path, monkeypatch, "")
    assert default.max_parallel == "auto"
    assert (default.join_admission, default.joins_per_worker) == (64, 16)
    said = settings_from(tmp_path, monkeypatch, "max_parallel: Auto\njoin_admission: 8\n")
    assert said.max_parallel == "auto" and said.join_admission == 8


def test_a_number_is_kept_and_used_as_it_is(tmp_path, monkeypatch):
    settings = settings_from(tmp_path, monkeypatch, "max_parallel: 16\njoin_admission: 2\n")
    assert settings.max_parallel == 16
    # the operator's number wins over auto's limits, whatever the workers
    assert [parallelism.chosen(settings, workers) for workers in (0, 1, 9)] == [16, 16, 16]


def test_auto_is_the_workers_share_capped_by_the_targets_admission(tmp_path, monkeypatch):
    settings = settings_from(
        tmp_path, monkeypatch, "max_parallel: auto\njoin_admission: 20\njoins_per_worker: 4\n"
    )
    # no worker yet plans for the first one; then 4 joins per worker, never above 20
    assert [parallelism.chosen(settings, w) for w in (0, 1, 2, 5, 6, 50)] == [4, 4, 8, 20, 20, 20]


@pytest.mark.parametrize(
    ("value", "shown"),
    [("fast", "'fast'"), ("0", "0"), ("65", "65"), ("true", "True"), ("2.5", "2.5"), ("", "None")],
)
def test_a_bad_max_parallel_is_one_line_naming_the_key(tmp_path, monkeypatch, value, shown):
    with pytest.raises(ConfigError) as caught:
        settings_from(tmp_path, monkeypatch, f"max_parallel: {value}\n")
    assert caught.value.problems == [
        f"{tmp_path / 'joinops.yaml'}: max_parallel: expected `auto` or a whole number from 1 "
        f"to 64, got {shown}"
    ]


@pytest.mark.parametrize("key", ["join_admission", "joins_per_worker"])
def test_auto_limits_must_be_positive_whole_numbers(tmp_path, monkeypatch, key):
    with pytest.raises(ConfigError) as caught:
        settings_from(tmp_path, monkeypatch, f"{key}: 0\n")
    [problem] = caught.value.problems
    assert f": {key}: Input should be greater than or equal to 1" in problem


def test_the_cli_says_the_bad_value_and_no_traceback(tmp_path, monkeypatch, capsys):
    path = tmp_path / "joinops.yaml"
    path.write_text(CLUSTERS + "max_parallel: lots\n")
    monkeypatch.setenv("JOINOPS_CONFIG", str(path))
    assert main(["clusters"]) == 2
    err = capsys.readouterr().err
    assert "max_parallel: expected `auto` or a whole number from 1 to 64, got 'lots'" in err
    assert "Traceback" not in err
