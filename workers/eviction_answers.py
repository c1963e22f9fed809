"""What an eviction's error answer means for a drain, as `kubectl drain` reads them.

- 429 (a disruption budget says not now): retry with backoff until the drain's deadline.
- 404: the pod is gone already.
- 403 with cause `NamespaceTerminating`: the namespace is being deleted, and the pod with it:
  wait for it to go.
- Any other 401/403: the credentials lack the right: stop the whole drain.
- 500 saying the pod has more than one PodDisruptionBudget: no retry can help: stop at once,
  naming the budgets (the server's message does not).
- 400/422: the request itself is wrong: stop at once with the API's message.
- Other 5xx: retry.

`refusal` says, for a drain that gives up, why a pod's eviction was refused: the budget named by
the 429's `DisruptionBudget` cause (the API server's message always begins "The disruption
budget <name> ..."), or a 429 with no such cause (API Priority and Fairness throttling: no
budget is blamed), or the namespace, or the API's answer.
"""

from __future__ import annotations

import json
import re
from enum import Enum
from typing import Any

from kubernetes.client.exceptions import ApiException

from joinops.clusters import pages
from joinops.clusters.kube import KubeCluster
from joinops.requests.drain_texts import Held

SEVERAL_BUDGETS = "more than one PodDisruptionBudget"
BUDGET_CAUSE = "DisruptionBudget"
_BUDGET_NAME = re.compile(r"^The disruption budget (\S+) (.*)$")


class Meaning(Enum):
    RETRY = "retry"
    GONE = "gone"
    WAIT = "wait"  # namespace terminating: the pod goes by itself
    FORBIDDEN = "forbidden"
    SEVERAL_BUDGETS = "several-budgets"
    REJECTED = "rejected"


def meaning(e: ApiException) -> Meaning:
    status = e.status or 0
    if status == 404:
        return Meaning.GONE
    if status == 403 and "NamespaceTerminating" in causes(e):
        return Meaning.WAIT
    if status in (401, 403):
        return Meaning.FORBIDDEN
    if status == 500 and SEVERAL_BUDGETS in message(e):
        return Meaning.SEVERAL_BUDGETS
    if status in (400, 422):
        return Meaning.REJECTED
    return Meaning.RETRY


def _body(e: ApiException) -> dict[str, Any]:
    try:
        body = json.loads(e.body or "{}")
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def message(e: ApiException) -> str:
    return str(_body(e).get("message") or f"HTTP {e.status}")[:300]


def causes(e: ApiException) -> dict[str, str]:
    """cause reason -> message."""
    found = (_body(e).get("details") or {}).get("causes") or []
    return {str(c.get("reason", "")): str(c.get("message", "")) for c in found}


def refusal(e: ApiException, namespace: str) -> Held:
    """Why this answer refused an eviction, in the drain's words."""
    budget = causes(e).get(BUDGET_CAUSE)
    if e.status == 429 and budget is not None:
        found = _BUDGET_NAME.match(budget)
        if found is None:
            return Held("budget", note=budget)
        return Held("budget", found.group(1), note=found.group(2))
    if e.status == 429:
        return Held("throttled", message(e))
    if meaning(e) is Meaning.WAIT:
        return Held("namespace", namespace)
    return Held("failing", f"HTTP {e.status}: {message(e)}")


def budgets_selecting(cluster: KubeCluster, pod: Any) -> list[str]:
    """The names of the PodDisruptionBudgets in the pod's namespace that select it."""
    namespace = pod.metadata.namespace
    listing = pages.list_all(
        cluster,
        f"poddisruptionbudgets in {namespace}",
        cluster.policy.list_namespaced_pod_disruption_budget,
        namespace,
    )
    labels = pod.metadata.labels or {}
    return sorted(str(b.metadata.name) for b in listing.items if _selects(b.spec.selector, labels))


def _selects(selector: Any, labels: dict[str, str]) -> bool:
    """Does a budget's selector pick a pod with `labels`? A nil or empty one picks nothing, as
    in the API server's eviction handler."""
    if selector is None:
        return False
    wanted = selector.match_labels or {}
    expressions = selector.match_expressions or []
    if not wanted and not expressions:
        return False
    if any(labels.get(k) != v for k, v in wanted.items()):
        return False
    return all(_expression_holds(x, labels) for x in expressions)


def _expression_holds(expression: Any, labels: dict[str, str]) -> bool:
    key, operator, values = expression.key, expression.operator, expression.values or []
    if operator == "In":
        return labels.get(key) in values
    if operator == "NotIn":
        return labels.get(key) not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    return False
