"""A kubeadm control plane's static pods, as their mirror pods show them through the API.

kubeadm runs etcd and kube-apiserver (with the controller manager and scheduler) as static pods
of the kubelet on each control-plane node; the kubelet mirrors them into `kube-system` as
`<component>-<node>`, labelled `component=<component>`, `tier=control-plane`, owned by the Node.
A control-plane join shows them only after its control-plane-join phase (etcd member added),
which comes after the kubelet started and the node turned Ready.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesim import node_objects
from kubesim.etcd import UNHEALTHY
from kubesim.hosts import CONTROL_PLANE_LABEL
from kubesim.resources import NODES, PODS

if TYPE_CHECKING:
    from kubesim.hosts import Host
    from kubesim.protocols import SimCluster

NAMESPACE = "kube-system"
COMPONENTS = ("etcd", "kube-apiserver")
API_SERVER_PORT = 6443  # --secure-port of the simulated kube-apiservers (kubeadm's default)


def mirror_pod_name(component: str, node: str) -> str:
    return f"{component}-{node}"


def _command(component: str, host: Host, version: str, port: int) -> list[str]:
    if component == "etcd":
        return [
            "etcd",
            f"--advertise-client-urls=https://{host.internal_ip}:2379",
            "--data-dir=/var/lib/etcd",
            f"--name={host.name}",
        ]
    return [
        "kube-apiserver",
        f"--advertise-address={host.internal_ip}",
        "--etcd-servers=https://127.0.0.1:2379",
        f"--secure-port={port}",
        f"--kubernetes-version={version}",
    ]


def components(cluster: SimCluster) -> tuple[str, ...]:
    """A control plane's static pods: no etcd of its own where kubeadm-config names an
    external etcd (kubeadm writes no etcd.yaml manifest then)."""
    return tuple(c for c in COMPONENTS if c != "etcd" or not cluster.external_etcd)


def add_control_plane_pods(cluster: SimCluster, host: Host, ready: bool) -> None:
    """Mirror pods of `host`'s etcd and kube-apiserver; Ready when `ready`. A stacked etcd's
    member (kubesim.etcd) comes with its etcd: started, voting, healthy when `ready`."""
    if "etcd" in components(cluster):
        cluster.etcd.add(host.name, host.internal_ip, healthy=ready)
    for component in components(cluster):
        name = mirror_pod_name(component, host.name)
        if cluster.store.get(PODS, NAMESPACE, name) is not None:
            cluster.store.remove(PODS, NAMESPACE, name)
        container = {
            "name": component,
            "image": f"registry.k8s.io/{component}:{cluster.version}",
            "command": _command(component, host, cluster.version, cluster.api_server_port),
        }
        cluster.add_pod(
            host.name,
            name,
            namespace=NAMESPACE,
            labels={"component": component, "tier": "control-plane"},
            mirror=True,
            spec={"containers": [container], "priorityClassName": "system-node-critical"},
        )
        if not ready:
            set_ready(cluster, host.name, False, component)


def set_ready(cluster: SimCluster, node: str, ready: bool, component: str | None = None) -> None:
    """Mark `node`'s control-plane mirror pods (or one component's) Ready or not."""
    now = cluster.now()

    def mark(obj: dict[str, Any]) -> None:
        status = obj.setdefault("status", {})
        for condition in status.get("conditions") or []:
            if condition.get("type") in ("Ready", "ContainersReady"):
                condition["status"] = "True" if ready else "False"
                condition["lastTransitionTime"] = now
        for container in status.get("containerStatuses") or []:
            container["ready"] = ready

    member = cluster.etcd.named(node)
    if member is not None and component in (None, "etcd"):
        member.healthy = ready  # its etcd answers health checks while its node runs
    for name in COMPONENTS if component is None else (component,):
        pod = mirror_pod_name(name, node)
        if cluster.store.get(PODS, NAMESPACE, pod) is not None:
            cluster.store.mutate(PODS, NAMESPACE, pod, mark)


def finish_control_plane_join(cluster: SimCluster, host: Host) -> None:
    """The control-plane-join phase: etcd member added, static pods up, node marked. A stacked
    etcd without quorum refuses the member (kubeadm's join fails in this phase)."""
    with cluster.lock:
        if cluster.hosts.get(host.name) is not host or not host.kubelet_running:
            return
        if "etcd" in components(cluster) and not cluster.etcd.has_quorum():
            cluster.world.record_join_failure(
                host.name,
                "error execution phase control-plane-join/etcd: error creating local etcd "
                f"static pod manifest file: {UNHEALTHY}",
            )
            return
        host.role = "control-plane"
        add_control_plane_pods(cluster, host, ready=True)

        def mark(obj: dict[str, Any]) -> None:
            labels = obj["metadata"].setdefault("labels", {})
            labels[CONTROL_PLANE_LABEL] = ""
            taints = obj.setdefault("spec", {}).setdefault("taints", [])
            if not any(t.get("key") == CONTROL_PLANE_LABEL for t in taints):
                taints.append(node_objects.control_plane_taint())

        cluster.store.mutate(NODES, "", host.name, mark)
    added = "etcd member added" if "etcd" in components(cluster) else "external etcd"
    cluster.world.record_event(cluster.name, "control-plane-joined", host.name, added)
