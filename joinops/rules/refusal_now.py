"""Why a check right before acting stopped a migration: a rule, or a cluster it could not reach."""

from __future__ import annotations

from joinops.clusters.texts import cannot_reach
from joinops.requests import step_texts
from joinops.rules.check import Verdict
from joinops.rules.findings import refusals

UNREACHED = "cluster-error"  # the finding code of a cluster the check could not read


def refusal_now(verdict: Verdict) -> str:
    """A cluster that did not answer is named as such, never blamed on the rules."""
    refused = refusals(verdict.findings)
    unreached = [f.text for f in refused if f.code == UNREACHED]
    if unreached:
        return cannot_reach(" ".join(unreached))
    return step_texts.rules_refuse_now(" ".join(f.text for f in refused))
