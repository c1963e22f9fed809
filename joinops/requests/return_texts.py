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


def target_node_left(request: Any) -> str:
    return (
        f"{request.target} did not answer when joinops looked for a Node `{request.node}` left "
        f"there by the failed join: if `kubectl --context {request.target} get node "
        f"{request.node}` shows one NotReady, delete it."
    )


def not_back_in_time(request: Any, timeout: timedelta) -> str:
    return f"`{request.node}` was not Ready in {request.source} within {minutes(timeout)}"


def node_gone_before_return(request: Any) -> str:
    return (
        f"`{request.node}` is no longer in {request.source}, so no way back could be prepared; "
        "nothing was changed on it."
    )


def no_other_control_plane(request: Any) -> str:
    return f"{request.source} has no other Ready control plane to upload its certificates from"


def forgone(request: Any, why: str) -> str:
    """The move goes on, but the node will not come back by itself if the join fails."""
    return (
        f"No way back into {request.source} could be prepared ({why}): if the join into "
        f"{request.target} fails, `{request.node}` will not return by itself."
    )
