"""Label and field selectors, parsed the way the API server reads query strings."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubesim.errors import ApiError, bad_request

_KEY = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # exists, !, =, !=, in, notin
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.op == "exists":
            return present
        if self.op == "!":
            return not present
        value = labels.get(self.key)
        if self.op in ("=", "in"):
            return present and value in self.values
        return not present or value not in self.values  # != and notin

    @property
    def indexable(self) -> bool:
        """True when only objects carrying the key can match."""
        return self.op in ("exists", "=", "in")


class LabelSelector:
    def __init__(self, requirements: list[Requirement]) -> None:
        self.requirements = requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements


def _split_top_level(text: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def _check_key(key: str, whole: str) -> None:
    if not _KEY.match(key):
        raise bad_request(f'unable to parse requirement: invalid label key "{key}": {whole}')


def _check_value(value: str) -> None:
    if len(value) > 63 or not _VALUE.match(value):
        raise bad_request(f'unable to parse requirement: invalid label value: "{value}"')


_SET_OP = re.compile(r"^(?P<key>\S+)\s+(?P<op>in|notin)\s*\((?P<values>[^)]*)\)\s*$")
_EQ_OP = re.compile(r"^(?P<key>[^=!\s]+)\s*(?P<op>==|=|!=)\s*(?P<value>\S*)\s*$")


def _parse_requirement(part: str) -> Requirement:
    text = part.strip()
    if text.startswith("!"):
        key = text[1:].strip()
        _check_key(key, text)
        return Requirement(key, "!")
    if m := _SET_OP.match(text):
        values = tuple(v.strip() for v in m["values"].split(",") if v.strip())
        _check_key(m["key"], text)
        for v in values:
            _check_value(v)
        return Requirement(m["key"], m["op"], values)
    if m := _EQ_OP.match(text):
        op = "=" if m["op"] in ("=", "==") else "!="
        _check_key(m["key"], text)
        _check_value(m["value"])
        return Requirement(m["key"], op, (m["value"],))
    _check_key(text, text)
    return Requirement(text, "exists")


def parse_label_selector(text: str | None) -> LabelSelector:
    if not text or not text.strip():
        return LabelSelector([])
    return LabelSelector([_parse_requirement(p) for p in _split_top_level(text)])


def selector_from_label_selector(spec: Mapping[str, Any] | None) -> LabelSelector | None:
    """metav1.LabelSelector (matchLabels/matchExpressions) to a selector; None if malformed."""
    if spec is None:
        return None
    reqs = [Requirement(k, "=", (str(v),)) for k, v in (spec.get("matchLabels") or {}).items()]
    ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}
    for expr in spec.get("matchExpressions") or []:
        op = ops.get(expr.get("operator", ""))
        if op is None:
            return None
        reqs.append(Requirement(expr.get("key", ""), op, tuple(expr.get("values") or ())))
    return LabelSelector(reqs)


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    equal: bool
    value: str


FieldGetter = Callable[[Mapping[str, Any]], str]


class FieldSelector:
    def __init__(self, requirements: list[FieldRequirement], getters: Mapping[str, FieldGetter]):
        self.requirements = requirements
        self._getters = getters

    def matches(self, obj: Mapping[str, Any]) -> bool:
        for req in self.requirements:
            actual = self._getters[req.field](obj)
            if (actual == req.value) != req.equal:
                return False
        return True

    def value_of(self, field: str) -> str | None:
        """The value an equality requirement pins ``field`` to, if any."""
        for req in self.requirements:
            if req.field == field and req.equal:
                return req.value
        return None

    @property
    def empty(self) -> bool:
        return not self.requirements


def path_getter(path: str) -> FieldGetter:
    keys = path.split(".")

    def get(obj: Mapping[str, Any]) -> str:
        cur: Any = obj
        for key in keys:
            if not isinstance(cur, Mapping):
                return ""
            cur = cur.get(key)
        if cur is None:
            return "false" if keys[-1] in BOOL_FIELDS else ""
        if isinstance(cur, bool):
            return "true" if cur else "false"
        return str(cur)

    return get


BOOL_FIELDS = {"unschedulable", "hostNetwork"}


def parse_field_selector(text: str | None, supported: Mapping[str, FieldGetter]) -> FieldSelector:
    if not text or not text.strip():
        return FieldSelector([], supported)
    reqs = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "!=" in part:
            field, value = part.split("!=", 1)
            equal = False
        elif "==" in part:
            field, value = part.split("==", 1)
            equal = True
        elif "=" in part:
            field, value = part.split("=", 1)
            equal = True
        else:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
        field = field.strip()
        if field not in supported:
            raise bad_request(f"field label not supported: {field}")
        reqs.append(FieldRequirement(field, equal, value.strip()))
    return FieldSelector(reqs, supported)


__all__ = [
    "ApiError",
    "FieldSelector",
    "LabelSelector",
    "Requirement",
    "parse_field_selector",
    "parse_label_selector",
    "path_getter",
    "selector_from_label_selector",
]
