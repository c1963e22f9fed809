"""Success needs a pod to run: after the node is Ready in the target, a short-lived pod pinned
to it must reach Running with an address from the node's pod CIDR.

A Ready node can still fail every new pod: the bridge CNI plugin keeps `cni0` with the address
of the old cluster's pod CIDR (flannel-io/flannel#1850), a CNI that never came up, a pod CIDR
the controller could not allocate. The check pod says so before the move is called done. Off
per target with `clusters.<name>.pod_check: false` (a target without a pod network yet). The
pod runs the pause image (`agent.check_image`), which every node holds for its sandboxes.
"""

from __future__ import annotations

import ipaddress

from joinops.clusters import hostpods, podstatus, watches
from joinops.clusters.kube import KubeCluster
from joinops.requests import host_texts
from workers import agent, hostprobe
from workers.errors import PermanentError
from workers.run import Run


def check_pods_run(run: Run) -> str:
    """The line to report ("" when the target skips the check); `PermanentError` saying where
    the node is when no pod can run on it."""
    configured = run.ctx.settings.clusters.get(run.request.target)
    if configured is not None and not configured.pod_check:
        return ""
    target, namespace, node = run.target, run.namespace, run.request.node
    name = agent.check_pod_name(run.id)
    pod = agent.check_pod(
        namespace=namespace,
        request_id=run.id,
        node=node,
        image=run.ctx.settings.agent.check_image,
    )
    created = hostpods.create_pod(target, namespace, pod)  # and its namespace, the first time
    try:
        running = watches.wait_for(
            target,
            f"pods/{name}",
            target.core.list_namespaced_pod,
            namespace,
            matches=lambda p: bool(p.status and p.status.phase == "Running" and p.status.pod_ip),
            deadline=run.ctx.clock() + run.ctx.settings.timeouts.pod_check.total_seconds(),
            clock=run.ctx.clock,
            since=created,  # watched from its creation: no list first
            field_selector=f"metadata.name={name}",
        )
        problem = (
            _why_not_running(target, namespace, name)
            if running is None
            else _outside_pod_cidr(target, node, running.status.pod_ip)
        )
    finally:
        hostpods.delete_pod(target, namespace, name)
    if problem:
        raise PermanentError(
            host_texts.pods_cannot_start(node, run.request.target, problem),
            where=host_texts.pods_cannot_start_where(node, run.request.target, namespace, name),
        )
    return host_texts.pod_check_passed(node, running.status.pod_ip)


def _why_not_running(target: KubeCluster, namespace: str, name: str) -> str:
    """The kubelet's reason, as `kubectl describe pod` shows it: its warning events first."""
    events = target.call(
        "list",
        f"events for pods/{name}",
        target.core.list_namespaced_event,
        namespace,
        field_selector=f"involvedObject.name={name}",
    )
    warnings = [e.message for e in events.items or [] if e.type == "Warning" and e.message]
    if warnings:
        return str(warnings[-1])
    pod = hostprobe.get_pod(target, namespace, name)
    return podstatus.waiting_reason(pod) if pod is not None else "the check pod disappeared"


def _outside_pod_cidr(target: KubeCluster, node: str, address: str) -> str:
    found = target.call_json("get", f"nodes/{node}", target.core.read_node, node)
    cidrs = [str(c) for c in (found.get("spec") or {}).get("podCIDRs") or []]
    if not cidrs or any(_within(address, cidr) for cidr in cidrs):
        return ""
    return host_texts.pod_address_outside(address, cidrs)


def _within(address: str, cidr: str) -> bool:
    try:
        return ipaddress.ip_address(address) in ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return False
