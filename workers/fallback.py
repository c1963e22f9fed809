"""The worker's side of a failed join: read the agent's phases, make way, see the node back.

The agent decides (workers/agent_return.py) and writes its phases into the request's record
ConfigMap in the source (`joinops-return-<id>`). joinops never starts a return itself: it waits
for the agent's decisive `abandoned` mark, and before it declares a join complete it writes
`target-complete` with the resourceVersion it read, so exactly one of the two wins. Then, with
the run's locks held: the old Node object is deleted in the source (kubeadm's join refuses while
a Ready Node of that name exists), `way-clear` is written, and the node is awaited Ready in the
source within `timeouts.join`; its schedulability, labels and taints are put back as they were,
the return material is removed, and the request ends *returned*. Each action is idempotent and
decided from the record, so a worker killed at any phase resumes the return, once.
"""

from __future__ import annotations

import json
from typing import Any, NoReturn

from joinops.clusters import watches
from joinops.errors import ClusterConflict, ClusterError, ClusterNotFound
from joinops.requests import return_texts
from joinops.requests.model import CONTROL_PLANE_LABEL
from workers import agent, agent_return, material, return_material
from workers.errors import PermanentError
from workers.run import Run

MEMORY = "wait-joined"


class Returned(Exception):
    """The join failed and the node is back in its source: the request ends *returned*."""


def record(run: Run) -> Any | None:
    """The record ConfigMap (None: there is none, or the source does not answer)."""
    if not return_material.returnable(run):
        return None
    name = agent.return_record_name(run.id)
    try:
        return run.source.call(
            "get",
            f"configmaps/{name}",
            run.source.core.read_namespaced_config_map,
            name,
            run.namespace,
        )
    except ClusterError:
        return None


def abandoned(run: Run) -> str | None:
    """Why the agent gave the target join up, once it has (its decisive mark); a resumed run
    that already began the return remembers it (the record goes at the end)."""
    remembered = run.memory(MEMORY).get("return_why")
    if remembered is not None:
        return str(remembered)
    found = record(run)
    data = (found.data or {}) if found is not None else {}
    return data.get("abandoned") if "abandoned" in data else None


def claim_complete(run: Run) -> bool:
    """Before success is declared: mark the join complete unless the agent abandoned it first.
    True when the join stands (or the node cannot return anyway)."""
    if not return_material.returnable(run):
        return True
    for _ in range(5):
        found = record(run)
        if found is None:
            return True  # no record to race with (an earlier run's clean-up removed it)
        data = found.data or {}
        if "abandoned" in data:
            return False
        if agent_return.COMPLETE in data:
            return True
        patch = {
            "metadata": {"resourceVersion": found.metadata.resource_version},
            "data": {agent_return.COMPLETE: "true"},
        }
        try:
            _patch(run, patch)
            return True
        except ClusterConflict:
            continue  # the agent wrote meanwhile: read again
    return abandoned(run) is None


def bring_back(run: Run, why: str) -> NoReturn:
    """The agent abandoned the target join: make way for it, then see it back (or fail)."""
    request = run.request
    memory = run.memory(MEMORY)
    if memory.get("back"):  # a run killed after the node was back: only the ending is left
        _end_material(run)
        raise Returned(return_texts.returned(request, why))
    if not memory.get("return_started"):
        run.remember(MEMORY, return_started=run.ctx.clock(), return_why=why)
        run.progress("wait-joined", return_texts.going_back(request, why))
    _make_way(run)
    deadline = float(memory.get("return_deadline") or 0) or (
        run.ctx.clock() + run.ctx.settings.timeouts.join.total_seconds()
    )
    run.remember(MEMORY, return_deadline=deadline)
    failed = _await_back(run, deadline)
    if failed is not None:
        _end_material(run)
        raise PermanentError(
            return_texts.return_failed(request, why, failed, agent.unit_name(run.id))
        )
    _restore(run)
    _clear_target(run)
    run.remember(MEMORY, back=True)
    _end_material(run)
    raise Returned(return_texts.returned(request, why))


def _make_way(run: Run) -> None:
    """Delete the old Node in the source, then tell the agent; both idempotent."""
    node = run.request.node
    try:
        run.source.call("delete", f"nodes/{node}", run.source.core.delete_node, node)
    except ClusterNotFound:
        pass
    found = record(run)
    if found is not None and agent_return.WAY_CLEAR not in (found.data or {}):
        _patch(run, {"data": {agent_return.WAY_CLEAR: "true"}})


def _await_back(run: Run, deadline: float) -> str | None:
    """None once the node is Ready in the source (a control plane: labelled as one, kubeadm's
    control-plane phase done); the agent's `return-failed` words, or the timeout's, if not."""
    source, node = run.source, run.request.node
    control_plane = run.request.from_control_plane
    while run.ctx.clock() < deadline:
        found = watches.wait_for(
            source,
            f"nodes/{node}",
            source.core.list_node,
            matches=lambda n: _ready(n) and (not control_plane or _labelled(n)),
            deadline=min(deadline, run.ctx.clock() + 2.0),
            clock=run.ctx.clock,
            field_selector=f"metadata.name={node}",
        )
        if found is not None:
            return None
        data = (record(run) or _Empty()).data or {}
        if data.get("phase") == "return-failed":
            return str(data.get("return-failed") or "")
    return return_texts.not_back_in_time(run.request, run.ctx.settings.timeouts.join)


def _restore(run: Run) -> None:
    """Schedulable as before the move, its labels and taints as they were."""
    was = json.loads(((record(run) or _Empty()).data or {}).get("was") or "{}") or dict(
        run.memory("join-material").get("return_was") or {}
    )
    node = run.request.node
    cordoned = bool(run.memory("cordon").get("was_cordoned", False))
    patch: dict[str, Any] = {
        "metadata": {"labels": was.get("labels", {})},
        "spec": {"unschedulable": cordoned},
    }
    if was.get("taints"):
        patch["spec"]["taints"] = was["taints"]
    run.source.call("patch", f"nodes/{node}", run.source.core.patch_node, node, patch)


def _clear_target(run: Run) -> None:
    """The Node the failed join registered in the target, if it did: its kubelet was reset and
    now serves the source, so it would stay there NotReady for good (without a cloud provider
    nothing deletes it) and the next move of this node would find the name taken."""
    target, node = run.target, run.request.node
    try:
        found = target.call("get", f"nodes/{node}", target.core.read_node, node)
        if not _ready(found):
            target.call("delete", f"nodes/{node}", target.core.delete_node, node)
    except ClusterNotFound:
        pass
    except ClusterError:
        run.progress("wait-joined", return_texts.target_node_left(run.request))


def _end_material(run: Run) -> None:
    """The agent's pod, Secret and record, and both clusters' tokens: the return is over."""
    from workers.material_steps import delete_tokens  # one module undoes tokens

    for kind, name in (
        ("pod", agent.agent_pod_name(run.id)),
        ("secret", agent.join_secret_name(run.id)),
    ):
        try:
            material.delete_quietly(run.source, run.namespace, kind, name)
        except ClusterError:
            pass
    try:
        return_material.delete_record(run)
    except ClusterError:
        pass
    try:
        delete_tokens(run, every=True)
    except ClusterError:
        pass


def _patch(run: Run, patch: dict[str, Any]) -> None:
    name = agent.return_record_name(run.id)
    run.source.call(
        "patch",
        f"configmaps/{name}",
        run.source.core.patch_namespaced_config_map,
        name,
        run.namespace,
        patch,
    )


def _ready(node: Any) -> bool:
    conditions = node.status.conditions if node.status else None
    return any(c.type == "Ready" and c.status == "True" for c in conditions or [])


def _labelled(node: Any) -> bool:
    return CONTROL_PLANE_LABEL in (node.metadata.labels or {})


class _Empty:
    data: dict[str, str] = {}
