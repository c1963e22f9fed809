"""The bot's Deployment keeps Slack answered through upgrades and node drains: several replicas
(`bot.replicas`, default 2), a RollingUpdate that starts a new bot before it stops an old one,
traffic only once ready, a drain before the stop, and a PodDisruptionBudget.

scripts/chart-check.sh checks every rendering with `deploy_check.bot_strategy_problems` and
`bot_budget_problems`; here the templates themselves are read (their lines without template
actions are plain YAML) and the checks are shown to refuse what they must.
"""

from __future__ import annotations

from typing import Any

import yaml
from deploy_check import bot_budget_problems, bot_strategy_problems
from deploy_schema import CHART, ROOT, VALUES

TEMPLATE = CHART / "templates" / "bot-deployment.yaml"
BUDGET = CHART / "templates" / "bot-pdb.yaml"


def without_actions(path: Any) -> dict[str, Any]:
    lines = [line for line in path.read_text().splitlines() if "{{" not in line]
    return yaml.safe_load("\n".join(lines))


def bot(spec: dict[str, Any]) -> dict[str, Any]:
    labels = {"app.kubernetes.io/component": "bot"}
    return {"kind": "Deployment", "metadata": {"name": "joinops-bot", "labels": labels}, **spec}


def rolled(replicas: Any = 2, **strategy: Any) -> dict[str, Any]:
    """A bot Deployment as the chart renders it, with `strategy` instead of the chart's."""
    container = {
        "name": "bot",
        "args": ["serve", "--drain-seconds", "5"],
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": "health"}},
    }
    chart = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}
    return bot(
        {
            "spec": {
                "replicas": replicas,
                "strategy": strategy or chart,
                "template": {"spec": {"containers": [container]}},
            }
        }
    )


def test_the_bot_is_rolled_a_new_one_ready_before_an_old_one_stops() -> None:
    spec = without_actions(TEMPLATE)["spec"]
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1},
    }
    assert yaml.safe_load(VALUES.read_text())["bot"]["replicas"] == 2
    assert "replicas: {{ .Values.bot.replicas }}" in TEMPLATE.read_text()
    template = TEMPLATE.read_text()
    assert "path: /readyz" in template and "- --drain-seconds" in template
    assert "terminationGracePeriodSeconds: {{ .Values.bot.terminationGracePeriodSeconds }}" in (
        template
    )


def test_several_bots_have_a_disruption_budget_of_one() -> None:
    budget = without_actions(BUDGET)
    assert budget["kind"] == "PodDisruptionBudget" and budget["spec"]["minAvailable"] == 1
    assert "{{- if gt (int .Values.bot.replicas) 1 }}" in BUDGET.read_text()


def test_the_checks_refuse_a_gap_in_an_upgrade() -> None:
    assert bot_strategy_problems(rolled()) == []
    assert bot_strategy_problems(rolled(1)) == []
    assert bot_strategy_problems(rolled(type="Recreate")) == [
        "Deployment joinops-bot: strategy is Recreate: an upgrade leaves Slack unanswered"
    ]
    assert bot_strategy_problems(rolled(type="RollingUpdate")) == [
        "Deployment joinops-bot: maxUnavailable is not 0: an old bot may stop first"
    ]
    unprobed = rolled()
    container = unprobed["spec"]["template"]["spec"]["containers"][0]
    del container["readinessProbe"]
    container["args"] = ["serve"]
    assert bot_strategy_problems(unprobed) == [
        "Deployment joinops-bot: no readinessProbe on /readyz: traffic before it is ready",
        "Deployment joinops-bot: no --drain-seconds: it stops while the Service still sends",
    ]
    worker = bot({"spec": {"replicas": 2, "strategy": {"type": "Recreate"}}})
    worker["metadata"]["labels"]["app.kubernetes.io/component"] = "worker"
    assert bot_strategy_problems(worker) == []


def test_the_checks_refuse_several_bots_without_a_budget() -> None:
    budget = without_actions(BUDGET)
    assert bot_budget_problems([rolled(), budget]) == []
    assert bot_budget_problems([rolled(1)]) == []
    assert bot_budget_problems([rolled()]) == [
        "Deployment joinops-bot: several bots and no PodDisruptionBudget of minAvailable 1"
    ]


def test_docs_say_how_several_bots_share_the_work() -> None:
    text = (ROOT / "docs" / "deploy.md").read_text()
    assert "maxUnavailable: 0" in text and "lease" in text and "bot.replicas" in text
