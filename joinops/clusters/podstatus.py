"""What a pod's status says of its containers, as `kubectl describe pod` shows it: the
termination message a finished container wrote, and why a Pending one waits."""

from __future__ import annotations

from typing import Any


def termination_message(pod: Any) -> str:
    """The first container's termination message (`/dev/termination-log`), else the pod's."""
    if pod is None or pod.status is None:
        return ""
    for status in pod.status.container_statuses or []:
        terminated = status.state.terminated if status.state else None
        if terminated is not None and terminated.message:
            return str(terminated.message)
    return str(pod.status.message or "")


def waiting_reason(pod: Any) -> str:
    """`ImagePullBackOff: Back-off pulling image "…"`; "still Pending" when none is given."""
    for status in (pod.status.container_statuses or []) if pod.status else []:
        waiting = status.state.waiting if status.state else None
        if waiting is not None and waiting.reason:
            return f"{waiting.reason}: {waiting.message}" if waiting.message else waiting.reason
    return "still Pending"
