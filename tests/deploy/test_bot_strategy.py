"""The bot's Deployment never runs two bots, not even during an upgrade (strategy: Recreate).

scripts/chart-check.sh checks every rendering with `deploy_check.bot_strategy_problems`; here the
template itself is read (its lines without template actions are plain YAML) and the check is
shown to refuse what it must.
"""

from __future__ import annotations

from typing import Any

import yaml
from deploy_check import bot_strategy_problems
from deploy_schema import CHART, ROOT

TEMPLATE = CHART / "templates" / "bot-deployment.yaml"


def template_without_actions() -> dict[str, Any]:
    lines = [line for line in TEMPLATE.read_text().splitlines() if "{{" not in line]
    return yaml.safe_load("\n".join(lines))


def bot(spec: dict[str, Any]) -> dict[str, Any]:
    labels = {"app.kubernetes.io/component": "bot"}
    return {"kind": "Deployment", "metadata": {"name": "joinops-bot", "labels": labels}, **spec}


def test_the_bot_deployment_is_one_replica_replaced_by_recreate() -> None:
    spec = template_without_actions()["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {"type": "Recreate"}  # no rollingUpdate settings either


def test_the_check_refuses_a_rolling_update_and_a_second_replica() -> None:
    recreate = {"type": "Recreate"}
    assert bot_strategy_problems(bot({"spec": {"replicas": 1, "strategy": recreate}})) == []
    assert bot_strategy_problems(bot({"spec": {"replicas": 1}})) == [
        "Deployment joinops-bot: strategy is RollingUpdate, not Recreate"
    ]
    assert bot_strategy_problems(bot({"spec": {"replicas": 2, "strategy": recreate}})) == [
        "Deployment joinops-bot: replicas is 2, not 1"
    ]
    worker = bot({"spec": {"replicas": 2}})
    worker["metadata"]["labels"]["app.kubernetes.io/component"] = "worker"
    assert bot_strategy_problems(worker) == []


def test_docs_say_why_recreate_and_not_a_relay_leader() -> None:
    text = (ROOT / "docs" / "deploy.md").read_text()
    assert "strategy: Recreate" in text and "Redis lock" in text
