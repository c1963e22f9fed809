"""Create/update validation answering 422 Invalid like the API server."""

from __future__ import annotations

import re
from typing import Any

from kubesim.csr_objects import create_errors
from kubesim.errors import field_invalid, field_required, invalid
from kubesim.resources import CSRS, PDBS, PODS, Resource

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = _LABEL + r"(\." + _LABEL + ")*"
_LABEL_RE = re.compile(f"^{_LABEL}$")
_SUBDOMAIN_RE = re.compile(f"^{_SUBDOMAIN}$")

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    f"for validation is '{_SUBDOMAIN}')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    f"used for validation is '{_LABEL}')"
)


def name_errors(res: Resource, name: str) -> list[dict[str, str]]:
    if res.dns_label_names:
        if len(name) > 63:
            return [field_invalid("metadata.name", name, "must be no more than 63 characters")]
        if not _LABEL_RE.match(name):
            return [field_invalid("metadata.name", name, LABEL_MSG)]
        return []
    if len(name) > 253:
        return [field_invalid("metadata.name", name, "must be no more than 253 characters")]
    if not _SUBDOMAIN_RE.match(name):
        return [field_invalid("metadata.name", name, SUBDOMAIN_MSG)]
    return []


def _pod_errors(obj: dict[str, Any]) -> list[dict[str, str]]:
    spec = obj.get("spec") or {}
    containers = spec.get("containers") or []
    if not containers:
        return [field_required("spec.containers")]
    errors = []
    seen = set()
    for i, container in enumerate(containers):
        name = container.get("name") or ""
        if not name:
            errors.append(field_required(f"spec.containers[{i}].name"))
        elif not _LABEL_RE.match(name):
            errors.append(field_invalid(f"spec.containers[{i}].name", name, LABEL_MSG))
        elif name in seen:
            errors.append(
                {
                    "reason": "FieldValueDuplicate",
                    "message": f'Duplicate value: "{name}"',
                    "field": f"spec.containers[{i}].name",
                }
            )
        seen.add(name)
        if not container.get("image"):
            errors.append(field_required(f"spec.containers[{i}].image"))
    return errors


def _pdb_errors(obj: dict[str, Any]) -> list[dict[str, str]]:
    spec = obj.get("spec") or {}
    if "minAvailable" in spec and "maxUnavailable" in spec:
        return [
            {
                "reason": "FieldValueInvalid",
                "field": "spec",
                "message": f"Invalid value: {_go_struct(spec)}: minAvailable and maxUnavailable "
                "cannot be both set",
            }
        ]
    errors = []
    for key in ("minAvailable", "maxUnavailable"):
        value = spec.get(key)
        if isinstance(value, int) and value < 0:
            errors.append(field_invalid(f"spec.{key}", value, "must be greater than or equal to 0"))
        if isinstance(value, str) and not re.match(r"^\d+%$", value):
            errors.append(
                field_invalid(
                    f"spec.{key}",
                    value,
                    "a valid percent string must be a "
                    "numeric string followed by an ending '%' (e.g. '1%',  "
                    "or '93%', regex used for validation is '[0-9]+%')",
                )
            )
    return errors


def _go_struct(spec: dict[str, Any]) -> str:
    return "policy.PodDisruptionBudgetSpec{...}"


def validate(res: Resource, obj: dict[str, Any], creating: bool = True) -> None:
    name = obj.get("metadata", {}).get("name") or ""
    errors: list[dict[str, str]] = []
    if not name:
        errors.append(field_required("metadata.name", "name or generateName is required"))
    else:
        errors += name_errors(res, name)
    if res is PODS:
        errors += _pod_errors(obj)
    elif res is PDBS:
        errors += _pdb_errors(obj)
    elif res is CSRS and creating:
        errors += create_errors(obj)
    labels = obj.get("metadata", {}).get("labels") or {}
    for key, value in labels.items():
        if (
            not isinstance(value, str)
            or len(value) > 63
            or not re.match(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$", value)
        ):
            errors.append(
                field_invalid(
                    "metadata.labels",
                    value,
                    "a valid label must be an empty string or consist of "
                    "alphanumeric characters, '-', '_' or '.', and must start "
                    "and end with an alphanumeric character",
                )
            )
        del key
    if errors:
        raise invalid(res.kind, name, errors, res.group)
