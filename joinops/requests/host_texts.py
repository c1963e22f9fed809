"""What the host says before anything changes on it (the facts and preflight probes), whether
the node agent started, and whether a pod runs on the moved node: the lines and problems of
those checks, shared by the Slack thread and the terminal. Text only, backticks at most.
"""

from __future__ import annotations

from datetime import timedelta

from joinops.wording import minutes


def host_facts_failed(node: str, what: str) -> str:
    return (
        f"Could not read `{node}`'s kubelet flags and container runtime ({what}); nothing was "
        "changed on the host."
    )


def cgroup_driver_mismatch(node: str, runtime: str, target: str, kubelet: str) -> str:
    return (
        f"`{node}`'s container runtime uses the `{runtime}` cgroup driver, but {target}'s "
        f"kubelet configuration (kube-system/kubelet-config) says `cgroupDriver: {kubelet}`: "
        f"its kubelet would not start there. Set the runtime's driver to `{kubelet}` on the "
        "host first (containerd: `SystemdCgroup`; CRI-O: `cgroup_manager`). Nothing was changed."
    )


def probe_passed(node: str, target: str, kept: list[str]) -> str:
    flags = (
        f" Kept from the host's kubelet flags: {', '.join(f'`--{k}`' for k in kept)}."
        if kept
        else ""
    )
    return (
        f"`{node}` can join {target}: the endpoint answers with the pinned CA and kubeadm's "
        f"join preflight passed.{flags}"
    )


def probe_failed(node: str, target: str, failures: list[tuple[str, str]]) -> str:
    said = "; ".join(f"{PROBE_CHECKS.get(name, name)}: {why}" for name, why in failures)
    return (
        f"`{node}` cannot join {target}, found before any change: {said}. Nothing was reset; "
        f"`{node}` stays in its cluster."
    )


PROBE_CHECKS = {
    "endpoint": "the target endpoint is not reachable from the node",
    "node-ip": "the kubelet's node-ip",
    "preflight": "kubeadm join preflight",
}


def never_started(node: str, what: str, within: timedelta, why: str) -> str:
    reason = f" ({why})" if why else ""
    return (
        f"The {what} never started on `{node}` within {minutes(within)}{reason}: nothing was "
        "reset on the host."
    )


def agent_start_unknown(node: str, within: timedelta, why: str) -> str:
    return (
        f"The node agent was not reported Running on `{node}` within {minutes(within)} ({why}), "
        f"but `{node}` no longer reports Ready either: the reset may have stopped its kubelet "
        "before the pod was reported. Waiting for the join."
    )


def unstarted_agent_left(why: str) -> str:
    return (
        f"Its pod could not be removed ({why}): should it start later, it finds its deadline "
        "passed and does nothing; delete it when you can."
    )


def pods_cannot_start(node: str, target: str, why: str) -> str:
    return f"`{node}` is Ready in {target}, but a pod cannot start on it: {why}"


def pods_cannot_start_where(node: str, target: str, namespace: str, pod: str) -> str:
    return (
        f"Where it is: `{node}` is in {target} and Ready, but joined with pods that cannot "
        f"start. What to do: read the events of `kubectl -n {namespace} describe pod {pod}` "
        f"in {target} (the check pod is deleted; the same happens to every new pod there); "
        "a bridge left by the old cluster is "
        f"removed on the host with `ip link delete cni0` (then restart the CNI pod on "
        f"`{node}`). The move is otherwise complete; the source was cleaned up."
    )


def pod_address_outside(address: str, cidrs: list[str]) -> str:
    return f"it got the address {address}, outside the node's pod CIDR {', '.join(cidrs)}"


def pod_check_passed(node: str, address: str) -> str:
    return f"a pod ran on `{node}` with address {address}"
