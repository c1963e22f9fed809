"""Pod Security admission on pod create, as the API server's PodSecurity plugin does it.

A namespace's `pod-security.kubernetes.io/enforce` label (`privileged`, `baseline`,
`restricted`; `-version` defaults to `latest`) decides; no label: the cluster default,
`privileged`. A value that does not parse is evaluated as `restricted`. The baseline checks
modelled are those a node agent trips (host namespaces, hostPath volumes, privileged
containers); `restricted` includes them. The refusal is a 403 with the real message:
`pods "NAME" is forbidden: violates PodSecurity "baseline:latest": host namespaces
(hostNetwork=true, hostPID=true), hostPath volumes (volume "host"), privileged (container
"agent" must not set securityContext.privileged=true)`.

Source read: kubernetes `staging/src/k8s.io/pod-security-admission`: `admission/admission.go`
(`violates PodSecurity %q: %s`, forbidden through `admission.NewForbidden`),
`policy/check_hostNamespaces.go`, `check_hostPathVolumes.go`, `check_privileged.go` (their
reasons and details, with `pluralize` and `joinQuote`), `policy/checks.go`
(`ForbiddenDetail`: `reason (detail)` joined by ", "). The checks run in ID order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

ENFORCE = "pod-security.kubernetes.io/enforce"
ENFORCE_VERSION = "pod-security.kubernetes.io/enforce-version"
LEVELS = ("privileged", "baseline", "restricted")

Check = Callable[[dict[str, Any]], tuple[str, str] | None]


def enforced(labels: dict[str, str]) -> str | None:
    """`level:version` to enforce, or None for privileged (nothing is checked)."""
    level = labels.get(ENFORCE, "privileged")
    if level not in LEVELS:
        level = "restricted"
    if level == "privileged":
        return None
    return f"{level}:{labels.get(ENFORCE_VERSION) or 'latest'}"


def _quoted(names: list[str]) -> str:
    return ", ".join(f'"{n}"' for n in names)


def _plural(one: str, many: str, count: int) -> str:
    return one if count == 1 else many


def _host_namespaces(spec: dict[str, Any]) -> tuple[str, str] | None:
    used = [f"{f}=true" for f in ("hostNetwork", "hostPID", "hostIPC") if spec.get(f)]
    return ("host namespaces", ", ".join(used)) if used else None


def _host_path_volumes(spec: dict[str, Any]) -> tuple[str, str] | None:
    names = [str(v.get("name")) for v in spec.get("volumes") or [] if v.get("hostPath")]
    if not names:
        return None
    return "hostPath volumes", f"{_plural('volume', 'volumes', len(names))} {_quoted(names)}"


def _privileged(spec: dict[str, Any]) -> tuple[str, str] | None:
    containers = [
        *(spec.get("initContainers") or []),
        *(spec.get("containers") or []),
        *(spec.get("ephemeralContainers") or []),
    ]
    names = [
        str(c.get("name"))
        for c in containers
        if (c.get("securityContext") or {}).get("privileged") is True
    ]
    if not names:
        return None
    which = f"{_plural('container', 'containers', len(names))} {_quoted(names)}"
    return "privileged", f"{which} must not set securityContext.privileged=true"


BASELINE: tuple[Check, ...] = (_host_namespaces, _host_path_volumes, _privileged)  # by ID


def violations(pod: dict[str, Any]) -> str:
    """ForbiddenDetail of the checks the pod fails ("" when none)."""
    spec = pod.get("spec") or {}
    found = [result for check in BASELINE if (result := check(spec)) is not None]
    return ", ".join(f"{reason} ({detail})" if detail else reason for reason, detail in found)


def refusal(namespace_labels: dict[str, str], pod: dict[str, Any]) -> str | None:
    """Why admission forbids the pod (`violates PodSecurity ...`), or None when it admits it."""
    policy = enforced(namespace_labels)
    if policy is None:
        return None
    detail = violations(pod)
    return f'violates PodSecurity "{policy}": {detail}' if detail else None
