"""RBAC as the Kubernetes authorizer sees it: manifests to rules, rules to grants, calls checked.

A `Policy` holds the PolicyRules bound to one ServiceAccount: cluster-wide rules (ClusterRoles bound
by ClusterRoleBindings) and per-namespace rules (Roles, or ClusterRoles bound by RoleBindings).
`allows` answers like the RBAC authorizer does for one API call. `grants` breaks the rules into
single permissions (namespace, group, resource, verb, name) and `needed_grants` gives the least
set of permissions a list of calls needs, so a test can say "exactly these and nothing more".

`Policy.simulator_rules()` hands the same rules to kubesim: ``cluster.rbac.set_rules(rules,
namespace_rules=namespace_rules)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "deploy" / "managed-cluster-rbac.yaml"
API_CALLS = ROOT / "deploy" / "api-calls.yaml"
CHART_RULES = ROOT / "helm" / "joinops" / "files" / "managed-cluster-rules.yaml"
SUBJECT = ("joinops-system", "joinops")  # the ServiceAccount of the manifest
AGENT_NAMESPACE = "joinops-system"  # config agent.namespace, default

ALL_NAMESPACES = "*"  # a call's namespace: any namespace, or a request across all of them
CLUSTER_SCOPED = ""  # a call's namespace: a cluster-scoped object


@dataclass(frozen=True)
class Call:
    """One API request as the authorizer sees it (non-resource when `url` is set)."""

    verb: str
    group: str = ""
    resource: str = ""  # plural, with /subresource
    namespace: str = CLUSTER_SCOPED
    name: str = ""  # set only when known in advance
    url: str = ""  # non-resource URL, e.g. /version

    def __str__(self) -> str:
        if self.url:
            return f"{self.verb} {self.url}"
        where = {ALL_NAMESPACES: "in any namespace", CLUSTER_SCOPED: "cluster-scoped"}.get(
            self.namespace, f"in {self.namespace}"
        )
        group = f"{self.group}/" if self.group else ""
        return f"{self.verb} {group}{self.resource}{'/' + self.name if self.name else ''} {where}"


def load_calls(path: Path = API_CALLS) -> list[Call]:
    calls = []
    for entry in yaml.safe_load(path.read_text())["calls"]:
        if "nonResourceURL" in entry:
            calls.append(Call(verb=entry["verb"], url=entry["nonResourceURL"]))
            continue
        calls.append(
            Call(
                verb=entry["verb"],
                group=entry["apiGroup"],
                resource=entry["resource"],
                namespace=entry["namespace"],
                name=entry.get("name") or "",
            )
        )
    return calls


@dataclass
class Policy:
    cluster_rules: list[dict[str, Any]] = field(default_factory=list)
    namespace_rules: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    unbound: list[str] = field(default_factory=list)  # roles no binding to the subject uses
    other_subjects: list[str] = field(default_factory=list)  # bindings naming anyone else

    def rules_for(self, namespace: str) -> list[dict[str, Any]]:
        """The rules that apply to a call in `namespace` ("*" and "" see cluster rules only)."""
        if namespace in (ALL_NAMESPACES, CLUSTER_SCOPED):
            return list(self.cluster_rules)
        return self.cluster_rules + self.namespace_rules.get(namespace, [])

    def simulator_rules(self) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
        """Arguments for kubesim's ``rbac.set_rules``: PolicyRule dicts, resource rules only.

        kubesim answers non-resource paths such as /version without asking its RBAC, and reads
        a rule without `resources` as "every resource", so nonResourceURLs rules stay out.
        """
        cluster = [dict(r) for r in self.cluster_rules if "nonResourceURLs" not in r]
        per_namespace = {ns: [dict(r) for r in rules] for ns, rules in self.namespace_rules.items()}
        return cluster, per_namespace


def load_documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def policy_from_manifest(
    documents: Iterable[Mapping[str, Any]], subject: tuple[str, str] = SUBJECT
) -> Policy:
    """The rules bound to ServiceAccount `subject` (namespace, name) by these objects."""
    docs = list(documents)
    cluster_roles = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ClusterRole"}
    roles = {
        (d["metadata"]["namespace"], d["metadata"]["name"]): d for d in docs if d["kind"] == "Role"
    }
    used: set[str] = set()
    policy = Policy()
    for binding in (d for d in docs if d["kind"] in ("ClusterRoleBinding", "RoleBinding")):
        where = f"{binding['kind']} {binding['metadata']['name']}"
        subjects = binding.get("subjects") or []
        ours = [
            s
            for s in subjects
            if s.get("kind") == "ServiceAccount" and (s.get("namespace"), s.get("name")) == subject
        ]
        if len(ours) != len(subjects):
            policy.other_subjects.append(where)
        if not ours:
            continue
        ref = binding["roleRef"]
        namespace = binding["metadata"].get("namespace", "")
        if ref["kind"] == "ClusterRole":
            role = cluster_roles[ref["name"]]
            used.add(f"ClusterRole {ref['name']}")
        else:
            role = roles[(namespace, ref["name"])]
            used.add(f"Role {namespace}/{ref['name']}")
        rules = [dict(r) for r in role.get("rules") or []]
        if binding["kind"] == "ClusterRoleBinding":
            policy.cluster_rules += rules
        else:
            policy.namespace_rules.setdefault(namespace, []).extend(rules)
    declared = {f"ClusterRole {n}" for n in cluster_roles} | {f"Role {ns}/{n}" for ns, n in roles}
    policy.unbound = sorted(declared - used)
    return policy


def policy_from_chart_rules(
    path: Path = CHART_RULES, agent_namespace: str = AGENT_NAMESPACE
) -> Policy:
    """The chart's rules file, laid out the way its templates bind it."""
    raw = yaml.safe_load(path.read_text())
    return Policy(
        cluster_rules=raw["cluster"],
        namespace_rules={
            "kube-system": raw["kube-system"],
            "kube-public": raw["kube-public"],
            agent_namespace: raw["agent"],
        },
    )


# --- the authorizer ------------------------------------------------------------------------------


def _resource_matches(patterns: list[str], resource: str) -> bool:
    base, _, sub = resource.partition("/")
    for pattern in patterns:
        if pattern in ("*", resource):
            return True
        if sub and pattern in (f"{base}/*", f"*/{sub}"):
            return True
    return False


def _url_matches(patterns: list[str], url: str) -> bool:
    return any(p == url or (p.endswith("*") and url.startswith(p[:-1])) for p in patterns)


def rule_allows(rule: Mapping[str, Any], call: Call) -> bool:
    verbs = rule.get("verbs") or []
    if "*" not in verbs and call.verb not in verbs:
        return False
    if call.url:
        return _url_matches(rule.get("nonResourceURLs") or [], call.url)
    if "nonResourceURLs" in rule and "resources" not in rule:
        return False
    groups = rule.get("apiGroups") or []
    if "*" not in groups and call.group not in groups:
        return False
    if not _resource_matches(rule.get("resources") or [], call.resource):
        return False
    names = rule.get("resourceNames") or []
    return not names or (bool(call.name) and call.name in names)


def allows(policy: Policy, call: Call) -> bool:
    rules = policy.cluster_rules if call.url else policy.rules_for(call.namespace)
    return any(rule_allows(rule, call) for rule in rules)


# --- single permissions --------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Grant:
    """One permission: `scope` "" means every namespace and the cluster; `name` "" means any."""

    scope: str
    group: str
    resource: str
    verb: str
    name: str = ""
    url: str = ""

    def covers(self, other: Grant) -> bool:
        return (
            (self.group, self.resource, self.verb, self.url)
            == (other.group, other.resource, other.verb, other.url)
            and self.scope in ("", other.scope)
            and self.name in ("", other.name)
        )

    def __str__(self) -> str:
        if self.url:
            return f"{self.verb} {self.url}"
        where = f"in {self.scope}" if self.scope else "cluster-wide"
        named = f" named {self.name}" if self.name else ""
        group = f"{self.group}/" if self.group else ""
        return f"{self.verb} {group}{self.resource}{named} {where}"


def wildcards(policy: Policy) -> list[str]:
    """Rules using `*` anywhere: none belong in a least-privilege policy."""
    found = []
    scoped = [("", r) for r in policy.cluster_rules] + [
        (ns, r) for ns, rules in policy.namespace_rules.items() for r in rules
    ]
    for ns, rule in scoped:
        for key in ("apiGroups", "resources", "verbs", "resourceNames", "nonResourceURLs"):
            if any("*" in value for value in rule.get(key) or []):
                found.append(f"{ns or 'cluster'}: {key} in {rule}")
    return found


def grants(policy: Policy) -> set[Grant]:
    found: set[Grant] = set()
    scoped = [("", r) for r in policy.cluster_rules] + [
        (ns, r) for ns, rules in policy.namespace_rules.items() for r in rules
    ]
    for scope, rule in scoped:
        for verb in rule.get("verbs") or []:
            for url in rule.get("nonResourceURLs") or []:
                found.add(Grant(scope, "", "", verb, url=url))
            for group in rule.get("apiGroups") or []:
                for resource in rule.get("resources") or []:
                    for name in rule.get("resourceNames") or [""]:
                        found.add(Grant(scope, group, resource, verb, name))
    return found


def least_grant(call: Call) -> Grant:
    """The narrowest permission that allows `call`."""
    if call.url:
        return Grant("", "", "", call.verb, url=call.url)
    scope = "" if call.namespace in (ALL_NAMESPACES, CLUSTER_SCOPED) else call.namespace
    return Grant(scope, call.group, call.resource, call.verb, call.name)


def needed_grants(calls: Iterable[Call]) -> set[Grant]:
    """The least set of permissions for `calls`: one per call, less those another one covers."""
    least = {least_grant(c) for c in calls}
    return {g for g in least if not any(h != g and h.covers(g) for h in least)}
