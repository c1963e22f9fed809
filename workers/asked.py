"""The cluster work the bot asks of the workers (`joinops.asking`), one RQ job each.

Each returns an `Answer`: the domain result (pickled by RQ for the bot), or the refusal of an
unknown name or a broken configuration, which the bot handles as if it had met it itself.
"""

from __future__ import annotations

from joinops.asking import Answer
from joinops.clusters.survey import survey as survey_clusters
from joinops.errors import UsageError
from joinops.ignition import readiness
from joinops.requests.asks import MigrationAsk
from joinops.requests.model import Role
from joinops.rules import batch as batches
from joinops.rules.check import Verdict, check
from workers import context


def check_move(ask: MigrationAsk) -> Answer:
    """Every rule for one migration, read from both clusters (joinops.rules.check). A node in
    neither cluster is a mistyped name: refused as one (its text suggests the names meant), so
    the bot answers the person alone and posts no refusal."""
    ctx = context.current()
    clusters, agent = ctx.clusters, ctx.settings.agent

    def checked() -> Verdict:
        verdict = check(
            ask,
            clusters.get(ask.source),
            clusters.get(ask.target),
            agent_namespace=agent.namespace,
            agent_image=agent.image,
        )
        if verdict.unknown_node is not None:
            raise UsageError(verdict.unknown_node.text)
        return verdict

    return Answer.of(checked)


def locate(nodes: list[str], target: str) -> Answer:
    """Which cluster each node is in (joinops.rules.batch.locate)."""
    return Answer.of(lambda: batches.locate(nodes, target, context.current().clusters))


def plan_nodes(
    nodes: list[str], source: str | None, target: str, role: Role, force: bool, max_nodes: int
) -> Answer:
    ctx = context.current()
    registry, agent = ctx.clusters, ctx.settings.agent
    return Answer.of(
        lambda: batches.plan_nodes(
            nodes,
            source,
            target,
            role,
            registry,
            force=force,
            max_nodes=max_nodes,
            agent_namespace=agent.namespace,
            agent_image=agent.image,
        )
    )


def plan_all(source: str, target: str, force: bool, max_nodes: int) -> Answer:
    ctx = context.current()
    registry, agent = ctx.clusters, ctx.settings.agent
    return Answer.of(
        lambda: batches.plan_all(
            source,
            target,
            registry,
            force=force,
            max_nodes=max_nodes,
            agent_namespace=agent.namespace,
            agent_image=agent.image,
        )
    )


def survey() -> Answer:
    """`/join clusters`: one row per cluster."""
    return Answer.of(lambda: survey_clusters(context.current().clusters))


def ignition_refusals(cluster: str, role: Role) -> Answer:
    """Why an Ignition file for `cluster` could not be made now (joinops.ignition.readiness)."""
    return Answer.of(lambda: readiness.refusals(context.current().clusters.get(cluster), role))
