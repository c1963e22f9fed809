"""What is said when a join fails and the node goes back into its source (workers.fallback).

Shared by the Slack thread and the terminal. Text only, backticks at most.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from joinops.requests.surface import command
from joinops.wording import minutes


def _role(request: Any) -> str:
    return "a control plane" if request.from_control_plane else "a worker"


def returned(request: Any, why: str) -> str:
    return (
        f"join into {request.target} failed ({why}); `{request.node}` is back in "
        f"{request.source} as {_role(request)}, schedulable again."
    )


def going_back(request: Any, why: str) -> str:
    return (
        f"The join into {request.target} failed ({why}): the node agent reset `{request.node}` "
        f"again and is taking it back into {request.source}; its old Node object there is "
        "removed to make way."
    )


def return_failed(request: Any, why: str, back: str, unit: str) -> str:
    return (
        f"join into {request.target} failed ({why}), and the way back into {request.source} "
        f"failed too ({back}). Where it is: reset, in neither cluster. How to look: on the "
        f"host, `journalctl -u {unit}` shows both joins. Next: fix the cause, then "
        f"{command(request, 'retry')}, or re-join the host by hand with fresh material "
        "(`kubeadm token create --print-join-command`)."
    )


def not_back_in_time(request: Any, timeout: timedelta) -> str:
    return f"`{request.node}` was not Ready in {request.source} within {minutes(timeout)}"


def node_gone_before_return(request: Any) -> str:
    return (
        f"`{request.node}` is no longer in {request.source}, so no way back could be prepared; "
        "nothing was changed on it."
    )


def no_return_material(request: Any, why: str) -> str:
    return (
        f"the way back into {request.source} could not be prepared ({why}); nothing was "
        f"changed on `{request.node}`."
    )
