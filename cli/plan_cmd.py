"""`joinops plan NODE --from SRC --to DST [--as ROLE] [--force] [--json]`: may this node move?"""

from __future__ import annotations

import argparse
import json
from typing import Any

from cli.common import add_force_argument, add_role_argument, load
from joinops.requests.asks import MigrationAsk, validate_ask
from joinops.requests.plan import plan_steps
from joinops.rules.check import Verdict, check
from joinops.rules.findings import Severity

_MARK = {Severity.REFUSAL: "REFUSED", Severity.WARNING: "WARNING", Severity.NOTE: "note"}


def register(sub: Any) -> None:
    p = sub.add_parser("plan", help="check the rules for a migration and show its steps")
    p.add_argument("node", metavar="NODE", help="node name, exactly as `kubectl get nodes` shows")
    p.add_argument("--from", dest="source", required=True, metavar="SRC", help="source cluster")
    p.add_argument("--to", dest="target", required=True, metavar="DST", help="target cluster")
    add_role_argument(p)
    add_force_argument(p)
    p.add_argument("--json", action="store_true", help="print the verdict as JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    settings, registry = load()
    ask = MigrationAsk(args.node, args.source, args.target, args.role, force=args.force)
    validate_ask(ask, registry.names_to_parse)
    verdict = check(
        ask,
        registry.get(ask.source),
        registry.get(ask.target),
        agent_namespace=settings.agent.namespace,
        agent_image=settings.agent.image,
    )
    print(json.dumps(verdict_json(verdict), indent=2) if args.json else render(verdict))
    return 0 if verdict.allowed else 1


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    ask = verdict.ask
    return {
        "allowed": verdict.allowed,
        "node": ask.node,
        "source": ask.source,
        "target": ask.target,
        "role": str(ask.role),
        "kubelet_version": str(verdict.node.kubelet_version) if verdict.node else None,
        "target_version": str(verdict.target.version) if verdict.target else None,
        "destroys_source": verdict.destroys_source,
        "force": ask.force,
        "deletes_for_good": verdict.pods.lost if verdict.pods and ask.force else [],
        "findings": [f.as_dict() for f in verdict.findings],
        "steps": [{"id": s.id, "title": s.title} for s in plan_steps(ask)],
    }


def render(verdict: Verdict) -> str:
    ask = verdict.ask
    head = "ALLOWED" if verdict.allowed else "REFUSED"
    forced = " (forced)" if ask.force else ""
    lines = [f"{head}: move {ask.node} from {ask.source} to {ask.target} as {ask.role}{forced}"]
    if verdict.versions:
        lines.append(verdict.versions)
    for finding in verdict.findings:
        lines.append(f"  {_MARK[finding.severity]}: {finding.text}")
    if verdict.allowed:
        lines.append("Steps:")
        lines += [f"  {i}. [{s.id}] {s.title}" for i, s in enumerate(plan_steps(ask), 1)]
    return "\n".join(lines)
