"""What a node agent's probes find on a simulated host, before anything is changed on it.

Two pods, as joinops runs them (workers/agent.py has the real scripts):
- the *facts* pod (its command reads `/var/lib/kubelet/kubeadm-flags.env`) reports the host's
  kubelet flags, its CRI sockets, the runtime's cgroup driver and the host's addresses;
- the *preflight* pod (`kubeadm join phase preflight`) reaches the target endpoint as the node
  will (`curl` with the pinned CA), checks that a `node-ip` in the JoinConfiguration is an
  address of this host, and runs kubeadm's join preflight with the checks that a node still in
  its old cluster must fail ignored (its own kubelet's and control plane's files and ports).

Both write one report line per fact or check to the container's termination message, the
preflight pod ending Failed when a check failed. Modelled on kubeadm's preflight
(cmd/kubeadm/app/preflight/checks.go: `Port-N` "Port N is in use", `NumCPU`, and the CRI
endpoint detection's "found multiple CRI endpoints on the host").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubesim.hosts import CONTROL_PLANE_PORTS, KUBELET_PORT, KUBERNETES_PROCESSES, VIP_MARKER
from kubesim.kubeadm import JoinConfig, normalise_endpoint

if TYPE_CHECKING:
    from kubesim.hosts import Host
    from kubesim.protocols import SimWorld

FACTS_MARK = "/var/lib/kubelet/kubeadm-flags.env"
PREFLIGHT_MARK = "kubeadm join phase preflight"


def facts_report(host: Host) -> str:
    flags = " ".join(f"--{name}={value}" for name, value in host.kubelet_flags.items())
    return "\n".join(
        [
            f"kubeadm-flags: {flags}",
            f"cri-sockets: {' '.join(host.runtime_sockets)}",
            f"cgroup-driver: {host.cgroup_driver}",
            f"addresses: {' '.join(host.addresses)}",
        ]
    )


def preflight_report(
    world: SimWorld, host: Host, config: JoinConfig, script: str = ""
) -> tuple[bool, str]:
    """(every check passed, the report). `script`: the probe pod's command, whose ignore list
    may name the ports of the unit's own VIP layout (see `_ignored_processes`)."""
    checks = [
        ("endpoint", _endpoint_problem(world, host, config)),
        ("node-ip", _node_ip_problem(host, config)),
        ("preflight", _kubeadm_problem(host, config, _ignored_processes(host, script))),
    ]
    lines = [
        f"check {name}: {'failed ' + problem if problem else 'ok'}" for name, problem in checks
    ]
    return all(not problem for _, problem in checks), "\n".join(lines)


def _endpoint_problem(world: SimWorld, host: Host, config: JoinConfig) -> str:
    parsed = normalise_endpoint(config.endpoint)
    if parsed is None:
        return f"curl: (3) URL rejected: Bad hostname ({config.endpoint})"
    name, port = parsed
    target = world.cluster_at(name, port)
    if target is None:
        return f"curl: (6) Could not resolve host: {name}"
    if not target.reachable or f"{name}:{port}" in host.unreachable:
        return f"curl: (7) Failed to connect to {name} port {port}: Connection refused"
    return ""


def _node_ip_problem(host: Host, config: JoinConfig) -> str:
    wanted = [ip.strip() for ip in config.kubelet_extra_args.get("node-ip", "").split(",")]
    missing = [ip for ip in wanted if ip and ip not in host.addresses]
    if missing:
        return (
            f"node-ip {', '.join(missing)} is not an address of this host "
            f"({', '.join(host.addresses)})"
        )
    return ""


def _ignored_processes(host: Host, script: str) -> frozenset[str]:
    """The processes whose ports the probe ignores: Kubernetes' own (the reset frees them),
    and nginx on a host with joinops's VIP marker when the script says so (the unit stops it
    between reset and join): `nginx) [ -e /host<marker> ] && ignore=...`."""
    vip = f"nginx) [ -e /host{VIP_MARKER} ]" in script and VIP_MARKER in host.files
    return KUBERNETES_PROCESSES | ({"nginx"} if vip else set())


def _kubeadm_problem(host: Host, config: JoinConfig, ignored: frozenset[str]) -> str:
    if not config.cri_socket and len(host.runtime_sockets) > 1:
        return (
            "found multiple CRI endpoints on the host. Please define which one do you wish to "
            "use by setting the 'criSocket' field in the kubeadm configuration file: "
            + ", ".join(host.runtime_sockets)
        )
    errors = []
    if config.cri_socket and config.cri_socket not in host.runtime_sockets:
        errors.append(
            "[ERROR CRI]: container runtime is not running: validate service connection: "
            f"dial {config.cri_socket.removeprefix('unix://')}: connect: no such file or directory"
        )
    ports = [KUBELET_PORT]
    if config.control_plane:
        ports += [config.bind_port, *CONTROL_PLANE_PORTS]
        if host.cpus < 2:
            errors.append(
                f"[ERROR NumCPU]: the number of available CPUs {host.cpus} is less than the "
                "required 2"
            )
    held = host.held_ports()
    for port in ports:
        process = held.get(port)
        if process is not None and process not in ignored:
            errors.append(f"[ERROR Port-{port}]: Port {port} is in use")
    if not errors:
        return ""
    return (
        "[preflight] Some fatal errors occurred: "
        + " ".join(errors)
        + " [preflight] If you know what you are doing, you can make a check non-fatal with "
        "`--ignore-preflight-errors=...`"
    )
