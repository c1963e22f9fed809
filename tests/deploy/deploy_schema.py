"""The chart's values: a JSON Schema checker for the keywords values.schema.json uses, and the
"every value says its default" rule of values.yaml.

Helm validates values with a full JSON Schema implementation (scripts/chart-check.sh checks it
rejects bad values); this small one lets the tests run without helm or extra packages. It refuses
a schema with a keyword it does not know, so it never passes something by ignoring it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "helm" / "joinops"
VALUES = CHART / "values.yaml"
SCHEMA = CHART / "values.schema.json"

CHECKED = {
    "type",
    "properties",
    "additionalProperties",
    "required",
    "items",
    "enum",
    "minimum",
    "maximum",
    "minLength",
    "minItems",
    "pattern",
    "$ref",
}
IGNORED = {"$schema", "title", "description", "definitions"}

_TYPES: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "null": lambda v: v is None,
}


class UnknownKeyword(Exception):
    pass


def validate(value: Any, schema: dict[str, Any], root: dict[str, Any] | None = None) -> list[str]:
    """Problems with `value`, one line each as `path: what`; [] when it is valid."""
    errors: list[str] = []
    _check(value, schema, root or schema, "", errors)
    return errors


def _check(
    value: Any, schema: dict[str, Any], root: dict[str, Any], path: str, out: list[str]
) -> None:
    unknown = set(schema) - CHECKED - IGNORED
    if unknown:
        raise UnknownKeyword(f"{path or '/'}: {sorted(unknown)}")
    where = path or "/"
    if "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/definitions/"):
            raise UnknownKeyword(f"{where}: $ref {ref}")
        _check(value, root["definitions"][ref.rsplit("/", 1)[1]], root, path, out)
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPES[t](value) for t in types):
            out.append(f"{where}: got {type(value).__name__}, want {' or '.join(types)}")
            return
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if _TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{where}: {value} is below {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            out.append(f"{where}: {value} is above {schema['maximum']}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            out.append(f"{where}: shorter than {schema['minLength']}")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            out.append(f"{where}: {value!r} does not match {schema['pattern']}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            out.append(f"{where}: fewer than {schema['minItems']} items")
        if "items" in schema:
            for i, item in enumerate(value):
                _check(item, schema["items"], root, f"{path}/{i}", out)
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                out.append(f"{where}: {key} is required")
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in properties:
                _check(item, properties[key], root, f"{path}/{key}", out)
            elif extra is False:
                out.append(f"{where}: unknown key {key!r}")
            elif isinstance(extra, dict):
                _check(item, extra, root, f"{path}/{key}", out)


def closed_object_paths(
    schema: dict[str, Any], root: dict[str, Any] | None = None, path: str = ""
) -> list[str]:
    """Paths of every object schema with named properties (outside arrays)."""
    root = root or schema
    if "$ref" in schema:
        schema = root["definitions"][schema["$ref"].rsplit("/", 1)[1]]
    found = []
    if schema.get("properties"):
        found.append(path)
        for key, sub in schema["properties"].items():
            found += closed_object_paths(sub, root, f"{path}/{key}")
    return found


# --- values.yaml: a comment with the default above every key ---------------------------------

_KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z_][A-Za-z0-9_]*):(?P<rest>.*)$")
_DEFAULT = re.compile(r"^Default: `(?P<value>.*)`$")


@dataclass(frozen=True)
class Documented:
    path: tuple[str, ...]
    comment: list[str]
    inline: bool  # the value is on the key's line (a leaf), not below it


def documented_keys(text: str) -> list[Documented]:
    """Each key of a block-style YAML file with the comment lines right above it."""
    found: list[Documented] = []
    stack: list[tuple[int, str]] = []
    comment: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            comment.append(stripped.lstrip("#").strip())
            continue
        if not stripped:
            comment = []
            continue
        match = _KEY.match(line)
        if match is None:
            raise ValueError(f"values.yaml must stay block-style with one key a line: {line!r}")
        indent = len(match["indent"])
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, match["key"]))
        rest = match["rest"].split(" #")[0].strip()
        found.append(Documented(tuple(k for _, k in stack), comment, bool(rest)))
        comment = []
    return found


def undocumented_defaults(text: str) -> list[str]:
    """Keys without a comment, and leaves whose `Default:` line is missing or wrong."""
    values = yaml.safe_load(text)
    problems = []
    for key in documented_keys(text):
        name = ".".join(key.path)
        if not key.comment:
            problems.append(f"{name}: no comment")
            continue
        if not key.inline:
            continue
        match = _DEFAULT.match(key.comment[-1])
        if match is None:
            problems.append(f"{name}: the last comment line must be Default: `value`")
            continue
        actual: Any = values
        for part in key.path:
            actual = actual[part]
        stated = yaml.safe_load(match["value"]) if match["value"] else None
        if stated != actual:
            problems.append(f"{name}: comment says {stated!r}, value is {actual!r}")
    return problems


def values_paths(values: Any, path: str = "") -> set[str]:
    """Every mapping path of the values, as /a/b."""
    found = {path}
    if isinstance(values, dict):
        for key, sub in values.items():
            found |= values_paths(sub, f"{path}/{key}")
    return found
