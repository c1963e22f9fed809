"""Whether a pod fits a node, as the scheduler's filter plugins decide, with their reasons."""

from __future__ import annotations

from typing import Any

from kubesim.node_objects import UNSCHEDULABLE_TAINT

UNSCHEDULABLE = "node(s) were unschedulable"
SELECTOR = "node(s) didn't match Pod's node affinity/selector"
VOLUME_AFFINITY = "node(s) had volume node affinity conflict"
NO_VOLUME = "node(s) didn't find available persistent volumes to bind"


def tolerates(tolerations: list[dict[str, Any]], taint: dict[str, Any]) -> bool:
    for tol in tolerations:
        if tol.get("effect") and tol.get("effect") != taint.get("effect"):
            continue
        if tol.get("operator") == "Exists":
            if not tol.get("key") or tol.get("key") == taint.get("key"):
                return True
        elif tol.get("key") == taint.get("key") and (tol.get("value") or "") == (
            taint.get("value") or ""
        ):
            return True
    return False


def _requirement_matches(req: dict[str, Any], values: dict[str, str]) -> bool:
    key, op, wanted = req.get("key", ""), req.get("operator", ""), req.get("values") or []
    present = key in values
    if op == "In":
        return present and values[key] in wanted
    if op == "NotIn":
        return not present or values[key] not in wanted
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and wanted:
        try:
            have, limit = int(values[key]), int(wanted[0])
        except ValueError:
            return False
        return have > limit if op == "Gt" else have < limit
    return False


def node_selector_matches(selector: dict[str, Any] | None, node: dict[str, Any]) -> bool:
    """A NodeSelector (terms ORed, expressions ANDed; ``matchFields`` on metadata.name)."""
    if not selector:
        return True
    labels = node["metadata"].get("labels") or {}
    fields = {"metadata.name": node["metadata"]["name"]}
    for term in selector.get("nodeSelectorTerms") or []:
        exprs = term.get("matchExpressions") or []
        field_exprs = term.get("matchFields") or []
        if not exprs and not field_exprs:
            continue
        if all(_requirement_matches(r, labels) for r in exprs) and all(
            _requirement_matches(r, fields) for r in field_exprs
        ):
            return True
    return False


def untolerated_taint(pod: dict[str, Any], node: dict[str, Any]) -> dict[str, Any] | None:
    tolerations = pod.get("spec", {}).get("tolerations") or []
    for taint in node.get("spec", {}).get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(tolerations, taint):
            found: dict[str, Any] = taint
            return found
    return None


def taint_reason(taint: dict[str, Any]) -> str:
    return f"node(s) had untolerated taint {{{taint.get('key', '')}: {taint.get('value', '')}}}"


def node_reason(pod: dict[str, Any], node: dict[str, Any]) -> str | None:
    """Why the pod cannot go to ``node`` (None: it fits), volumes aside."""
    spec = pod.get("spec") or {}
    unschedulable_taint = {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}
    if node.get("spec", {}).get("unschedulable") and not tolerates(
        spec.get("tolerations") or [], unschedulable_taint
    ):
        return UNSCHEDULABLE
    taint = untolerated_taint(pod, node)
    if taint is not None:  # the filters run in this order; the first that fails is reported
        return taint_reason(taint)
    labels = node["metadata"].get("labels") or {}
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return SELECTOR
    required = (
        (spec.get("affinity") or {})
        .get("nodeAffinity", {})
        .get("requiredDuringSchedulingIgnoredDuringExecution")
    )
    if required and not node_selector_matches(required, node):
        return SELECTOR
    return None


def unschedulable_message(total: int, reasons: list[str]) -> str:
    """The scheduler's FitError text: ``0/N nodes are available: ...``."""
    counts: dict[str, int] = {}
    for reason in reasons:
        counts[reason] = counts.get(reason, 0) + 1
    parts = sorted(f"{n} {reason}" for reason, n in counts.items())
    head = f"0/{total} nodes are available"
    body = f"{head}: {', '.join(parts)}." if parts else f"{head}."
    return (
        f"{body} preemption: {head}: {total} Preemption is not helpful for scheduling."
        if total
        else f"{head}: no nodes available to schedule pods."
    )
