"""The chart's values: documented defaults, a schema that refuses mistakes, joinops's defaults."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from deploy_schema import (
    CHART,
    ROOT,
    SCHEMA,
    VALUES,
    closed_object_paths,
    undocumented_defaults,
    validate,
    values_paths,
)
from pydantic import BaseModel

from joinops.settings import FileConfig

EXAMPLES = sorted((CHART / "examples").glob("*.yaml"))
DOCS = ROOT / "docs" / "deploy.md"


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA.read_text())


@pytest.fixture(scope="module")
def values() -> dict[str, Any]:
    return yaml.safe_load(VALUES.read_text())


def with_value(values: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(values)
    *parents, last = dotted.split(".")
    node = changed
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    node[last] = value
    return changed


def test_defaults_and_examples_are_valid(schema: dict[str, Any], values: dict[str, Any]) -> None:
    assert validate(values, schema) == []
    assert [e.name for e in EXAMPLES] == [
        "external-redis.yaml",
        "http-ingress.yaml",
        "socket-mode.yaml",
    ]
    for example in EXAMPLES:
        assert validate(yaml.safe_load(example.read_text()), schema) == [], example.name


@pytest.mark.parametrize(
    ("key", "value", "complaint"),
    [
        ("bot.port", "3000", "want integer"),
        ("bot.mode", "websocket", "is not one of"),
        ("bot.colour", "red", "unknown key 'colour'"),
        ("colour", "red", "unknown key 'colour'"),
        ("worker.replicas", -1, "below 0"),
        ("worker.replicas", True, "want integer"),
        ("redis.bundled", "yes", "want boolean"),
        ("redis.url", "localhost:6379", "does not match"),
        ("config.max_parallel", 65, "above 64"),
        ("config.timeouts.drain", "ten minutes", "does not match"),
        ("config.timeouts.sleep", "1m", "unknown key 'sleep'"),
        ("config.approvers", ["alice"], "does not match"),
        ("config.agent.host_profile", "ssh", "is not one of"),
        ("clusters", [{"name": "a", "kubeconfig": "/x"}], "unknown key 'kubeconfig'"),
        ("clusters", [{"secretName": "x"}], "name is required"),
        ("clusters", [{"name": "bad name", "secretName": "x"}], "does not match"),
        ("bot.resources.requests.cpu", "lots", "does not match"),
        ("bot.resources.requests.gpu", 1, "unknown key 'gpu'"),
        ("metrics.enabled", "true", "want boolean"),
        ("managedClusterRbac.namespace", "x", "unknown key 'namespace'"),
        ("arrivals.channel", "#arrivals", "does not match"),
        ("arrivals.directory", "hosts.d", "does not match"),
        ("arrivals.propose", {"to": "clusterB", "as": "master"}, "is not one of"),
        ("arrivals.propose", {"into": "clusterB"}, "unknown key 'into'"),
        ("arrivals.colour", "red", "unknown key 'colour'"),
    ],
)
def test_the_schema_refuses_wrong_types_and_unknown_keys(
    schema: dict[str, Any], values: dict[str, Any], key: str, value: Any, complaint: str
) -> None:
    errors = validate(with_value(values, key, value), schema)
    assert any(complaint in e for e in errors), errors


def test_every_value_says_its_default() -> None:
    assert undocumented_defaults(VALUES.read_text()) == []


def test_every_schema_option_is_in_values_yaml(
    schema: dict[str, Any], values: dict[str, Any]
) -> None:
    missing = set(closed_object_paths(schema)) - values_paths(values)
    assert sorted(missing) == []


def _fields(model: type[BaseModel]) -> dict[str, Any]:
    """The field names of a settings model, nested models as dicts."""
    out: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        sub = info.annotation
        out[name] = _fields(sub) if isinstance(sub, type) and issubclass(sub, BaseModel) else None
    return out


def _keys(values: Any) -> dict[str, Any]:
    return {k: _keys(v) if isinstance(v, dict) else None for k, v in values.items()}


def test_config_mirrors_joinops_settings_and_their_defaults(values: dict[str, Any]) -> None:
    expected = _fields(FileConfig)
    del expected["clusters"]  # from the `clusters` list, with their kubeconfig Secrets
    del expected["arrivals"]  # from the `arrivals` values, with their hosts' Secret
    assert _keys(values["config"]) == expected
    assert FileConfig.model_validate(values["config"]) == FileConfig()


def rendered_config(values: dict[str, Any]) -> dict[str, Any]:
    """What templates/configmap.yaml renders into config.yaml."""
    clusters = {}
    for c in values.get("clusters", []):
        if c.get("inCluster"):
            clusters[c["name"]] = {"kubeconfig": "/etc/joinops/config/in-cluster.kubeconfig"}
        else:
            clusters[c["name"]] = {"kubeconfig": f"/etc/joinops/clusters/{c['name']}/kubeconfig"}
            if c.get("context"):
                clusters[c["name"]]["context"] = c["context"]
    rendered = {**values.get("config", {}), "clusters": clusters}
    arrivals = values.get("arrivals") or {}
    if arrivals.get("secretName"):
        rendered["arrivals"] = {
            "directory": arrivals.get("directory", "/etc/joinops/hosts.d"),
            "poll": arrivals.get("poll", "5s"),
            **({"channel": arrivals["channel"]} if arrivals.get("channel") else {}),
            **({"propose": arrivals["propose"]} if arrivals.get("propose") else {}),
        }
    return rendered


def test_arrivals_values_make_joinops_s_arrivals_settings(
    schema: dict[str, Any], values: dict[str, Any]
) -> None:
    assert rendered_config(values).get("arrivals") is None  # off by default
    on = with_value(values, "arrivals.secretName", "joinops-hosts")
    on = with_value(on, "arrivals.channel", "C0123ARRIV")
    on = with_value(on, "arrivals.propose", {"to": "clusterB", "as": "worker"})
    assert validate(on, schema) == []
    settings = FileConfig.model_validate(rendered_config(on)).arrivals
    assert settings is not None
    assert str(settings.directory) == "/etc/joinops/hosts.d" and settings.channel == "C0123ARRIV"
    assert settings.propose is not None and settings.propose.to == "clusterB"
    assert settings.poll.total_seconds() == 5
    chart = (CHART / "templates" / "configmap.yaml").read_text()
    assert '$arrivals := dict "directory" .directory "poll" .poll' in chart
    helpers = (CHART / "templates" / "_helpers.tpl").read_text()
    assert "secretName: {{ .Values.arrivals.secretName }}" in helpers  # the Secret projected
    assert "mountPath: {{ .Values.arrivals.directory }}" in helpers  # at the directory


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_examples_make_a_config_joinops_accepts(example: Path) -> None:
    config = FileConfig.model_validate(rendered_config(yaml.safe_load(example.read_text())))
    assert config.clusters


def test_the_install_guide_uses_the_charts_values(
    schema: dict[str, Any], values: dict[str, Any]
) -> None:
    text = DOCS.read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
    snippets = [yaml.safe_load(b) for b in blocks if "apiVersion:" not in b]
    assert snippets, "docs/deploy.md shows values"
    for snippet in snippets:
        assert validate(snippet, schema) == [], snippet
    known = {p.strip("/").replace("/", ".") for p in values_paths(values)}
    for key in re.findall(r"--set(?:-string)? ([A-Za-z.\[\]0-9]+)=", text):
        assert re.sub(r"\[\d+\]", "", key) in known or key.startswith("clusters["), key
    for path in re.findall(r"(?:helm|deploy|scripts)/[\w./-]+\.(?:yaml|sh)", text):
        assert (ROOT / path).exists(), path
