"""Configuration: one typed object from env + YAML; bad files get one message per problem."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from cli import main
from joinops.errors import ConfigError
from joinops.settings import load_settings, parse_duration


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("JOINOPS_CONFIG", "KUBECONFIG", "SLACK_BOT_TOKEN", "SLACK_API_URL", "REDIS_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "joinops.yaml"
    path.write_text(text)
    return path


def test_full_file_is_read_into_typed_settings(tmp_path, monkeypatch):
    path = write(
        tmp_path,
        """
clusters:
  clusterA: {kubeconfig: /etc/joinops/clusterA.kubeconfig}
  clusterB: {kubeconfig: /etc/joinops/clusterB.kubeconfig, context: admin@clusterB}
approvers: [U012ABCDEF, S0GROUP1]
timeouts: {approval: 30m, drain: 10m, join: 1h15m}
agent: {namespace: joinops-system, image: example.com/agent:1, host_profile: ock}
""",
    )
    monkeypatch.setenv("JOINOPS_CONFIG", str(path))
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-secret")
    monkeypatch.setenv("SLACK_API_URL", "http://127.0.0.1:9/api/")
    settings = load_settings()
    assert settings.cluster_names == ["clusterA", "clusterB"]
    assert settings.clusters["clusterB"].context == "admin@clusterB"
    assert settings.timeouts.join == timedelta(hours=1, minutes=15)
    assert settings.agent.host_profile == "ock"
    assert settings.secrets.slack_api_url == "http://127.0.0.1:9/api/"
    assert settings.secrets.redis_url == "redis://localhost:6379/0"
    assert "xoxb-secret" not in repr(settings)  # secrets never print


def test_bad_file_gets_one_line_per_problem(tmp_path, monkeypatch):
    path = write(
        tmp_path,
        """
clusters:
  clusterA: {kubeconfig: /x, contxt: a}
approvers: [alice]
timeouts: {drain: soon}
agent: {host_profile: ssh}
""",
    )
    monkeypatch.setenv("JOINOPS_CONFIG", str(path))
    with pytest.raises(ConfigError) as caught:
        load_settings()
    text = "\n".join(caught.value.problems)
    assert "clusters.clusterA.contxt: unknown key" in text
    assert "approvers: 'alice' is not a Slack user ID" in text
    assert "timeouts.drain: expected a duration such as 90s, 10m, 1h30m or 2d" in text
    assert "agent.host_profile: got 'ssh'" in text and "'kubeadm' or 'ock'" in text
    assert len(caught.value.problems) == 4


def test_cli_exits_2_with_the_problems_and_no_traceback(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("JOINOPS_CONFIG", str(write(tmp_path, "clusters: [a, b]\n")))
    assert main(["clusters"]) == 2
    err = capsys.readouterr().err
    assert "clusters: Input should be a valid dictionary" in err
    assert "Traceback" not in err


def test_unreadable_config_file_is_named(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("JOINOPS_CONFIG", str(tmp_path / "missing.yaml"))
    assert main(["clusters"]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_without_config_every_kubeconfig_context_is_a_cluster(tmp_path, monkeypatch):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("""
apiVersion: v1
kind: Config
contexts:
- {name: dev, context: {cluster: dev, user: dev}}
- {name: prod, context: {cluster: prod, user: prod}}
""")
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    settings = load_settings()
    assert settings.cluster_names == ["dev", "prod"]
    assert settings.clusters["prod"].context == "prod"


@pytest.mark.parametrize("text,seconds", [("90s", 90), ("10m", 600), ("1h30m", 5400), (45, 45)])
def test_durations(text, seconds):
    assert parse_duration(text).total_seconds() == seconds


def test_requesters_are_typed_and_their_ids_checked(tmp_path, monkeypatch):
    good = "clusters: {a: {kubeconfig: /x}}\n"
    monkeypatch.setenv("JOINOPS_CONFIG", str(write(tmp_path, good)))
    assert load_settings().requesters.anyone  # not configured: everyone may ask
    path = write(
        tmp_path,
        good + "requesters: {users: [U012ABCDEF], groups: [S0OPS], channels: [C0OPS, G0PRIV]}\n",
    )
    monkeypatch.setenv("JOINOPS_CONFIG", str(path))
    requesters = load_settings().requesters
    assert (requesters.users, requesters.groups, requesters.channels) == (
        ["U012ABCDEF"],
        ["S0OPS"],
        ["C0OPS", "G0PRIV"],
    )
    assert not requesters.anyone

    bad = good + "requesters: {users: [alice], groups: [U012ABCDEF], channels: ['#ops'], x: 1}\n"
    monkeypatch.setenv("JOINOPS_CONFIG", str(write(tmp_path, bad)))
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert sorted(caught.value.problems) == [
        f"{tmp_path / 'joinops.yaml'}: requesters.channels: '#ops' is not a Slack channel ID "
        "(C…/G…/D…)",
        f"{tmp_path / 'joinops.yaml'}: requesters.groups: 'U012ABCDEF' is not a Slack user-group "
        "ID (S…)",
        f"{tmp_path / 'joinops.yaml'}: requesters.users: 'alice' is not a Slack user ID (U…/W…)",
        f"{tmp_path / 'joinops.yaml'}: requesters.x: unknown key (check the spelling; see README, "
        "Configuration)",
    ]


def test_arrivals_are_read_and_their_proposal_must_name_a_configured_cluster(tmp_path, monkeypatch):
    path = write(
        tmp_path,
        """
clusters:
  clusterB: {kubeconfig: /etc/joinops/clusterB.kubeconfig}
arrivals:
  directory: /etc/joinops/hosts.d
  channel: C0ARRIVALS
  propose: {to: clusterB, as: worker}
  poll: 2s
""",
    )
    monkeypatch.setenv("JOINOPS_CONFIG", str(path))
    arrivals = load_settings().arrivals
    assert arrivals is not None and arrivals.directory == Path("/etc/joinops/hosts.d")
    assert arrivals.propose is not None and arrivals.propose.as_ == "worker"
    assert arrivals.poll == timedelta(seconds=2)
    path.write_text("arrivals: {directory: /d, channel: general, propose: {to: clusterZ}}\n")
    with pytest.raises(
        ConfigError, match=r"arrivals\.channel: 'general' is not a Slack channel ID"
    ):
        load_settings()
    path.write_text("arrivals: {directory: /d, propose: {to: clusterZ}}\n")
    with pytest.raises(ConfigError, match=r"arrivals\.propose\.to: 'clusterZ' is not a cluster"):
        load_settings()
    path.write_text("arrivals: {directory: /d}\n")  # every cluster may come from the directory
    assert load_settings().clusters == {}
