"""Authorisation: allow everything by default, or RBAC-like rules; explicit denials win."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesim.errors import ApiError, forbidden

DEFAULT_USER = "system:serviceaccount:joinops:joinops"


@dataclass(frozen=True)
class Attributes:
    """What a request asks for, as the authorizer sees it."""

    verb: str
    group: str
    resource: str  # plural, without subresource
    subresource: str = ""
    namespace: str = ""
    name: str = ""

    @property
    def full_resource(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


def _rule_matches(rule: Mapping[str, Any], attrs: Attributes) -> bool:
    groups = rule.get("apiGroups", ["*"])
    resources = rule.get("resources", ["*"])
    verbs = rule.get("verbs", ["*"])
    names = rule.get("resourceNames") or []
    if "*" not in groups and attrs.group not in groups:
        return False
    if "*" not in verbs and attrs.verb not in verbs:
        return False
    wanted = attrs.full_resource
    if not any(
        r in ("*", wanted) or (r == f"{attrs.resource}/*" and attrs.subresource) for r in resources
    ):
        return False
    return not names or attrs.name in names


class Rbac:
    """``rules=None`` allows everything. ``deny`` entries refuse even when rules allow."""

    def __init__(self, user: str = DEFAULT_USER) -> None:
        self.user = user
        self._lock = threading.Lock()
        self._rules: list[dict[str, Any]] | None = None
        self._namespace_rules: dict[str, list[dict[str, Any]]] = {}
        self._denials: list[tuple[str, str, str | None, str | None]] = []

    def set_rules(
        self,
        rules: Sequence[Mapping[str, Any]] | None,
        namespace_rules: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    ) -> None:
        """Cluster-wide rules (a ClusterRole) and per-namespace rules (Roles); None: allow all."""
        with self._lock:
            self._rules = None if rules is None else [dict(r) for r in rules]
            self._namespace_rules = {
                ns: [dict(r) for r in rs] for ns, rs in (namespace_rules or {}).items()
            }
            if rules is None and namespace_rules:
                self._rules = []

    def deny(
        self, verb: str, resource: str, namespace: str | None = None, name: str | None = None
    ) -> None:
        """Refuse ``verb`` on ``resource`` (may be ``pods/eviction``; ``*`` matches any)."""
        with self._lock:
            self._denials.append((verb, resource, namespace, name))

    def allow_all(self) -> None:
        with self._lock:
            self._rules = None
            self._namespace_rules = {}
            self._denials = []

    def allowed(self, attrs: Attributes) -> bool:
        with self._lock:
            for verb, resource, namespace, name in self._denials:
                if (
                    verb in ("*", attrs.verb)
                    and resource in ("*", attrs.full_resource)
                    and (namespace is None or namespace == attrs.namespace)
                    and (name is None or name == attrs.name)
                ):
                    return False
            if self._rules is None:
                return True
            rules = list(self._rules)
            if attrs.namespace:
                rules += self._namespace_rules.get(attrs.namespace, [])
        return any(_rule_matches(rule, attrs) for rule in rules)

    def check(self, attrs: Attributes) -> None:
        if not self.allowed(attrs):
            raise self.forbidden(attrs)

    def forbidden(self, attrs: Attributes) -> ApiError:
        scope = (
            f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
        )
        why = (
            f'User "{self.user}" cannot {attrs.verb} resource "{attrs.full_resource}" '
            f'in API group "{attrs.group}" {scope}'
        )
        return forbidden(attrs.resource, attrs.name, attrs.group, why)


def bound_rules_allow(
    roles: Sequence[Mapping[str, Any]],
    bindings: Sequence[Mapping[str, Any]],
    user: str,
    groups: Sequence[str],
    attrs: Attributes,
) -> bool:
    """The RBAC authorizer for one namespace's stored Roles and RoleBindings: does a binding
    name the user or one of its groups, and its Role allow `attrs`? (A ClusterRole a binding
    may name is not stored by kubesim: never allows.)"""
    by_name = {r.get("metadata", {}).get("name"): r for r in roles}
    for binding in bindings:
        ref = binding.get("roleRef") or {}
        role = by_name.get(ref.get("name")) if ref.get("kind") == "Role" else None
        if role is None or not any(_names(s, user, groups) for s in binding.get("subjects") or []):
            continue
        if any(_rule_matches(rule, attrs) for rule in role.get("rules") or []):
            return True
    return False


def _names(subject: Mapping[str, Any], user: str, groups: Sequence[str]) -> bool:
    kind, name = subject.get("kind"), subject.get("name")
    return (kind == "User" and name == user) or (kind == "Group" and name in groups)
