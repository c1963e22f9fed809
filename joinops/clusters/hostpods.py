"""The privileged pods joinops runs on a node's host (the node agent, its facts and probe pods,
the etcdctl pod) and the namespace they run in: one builder for all of them.

Each pod is pinned to its node by `nodeName` (no scheduler, no cordon in the way), shares the
host's network (and its PIDs when asked), mounts the host's `/` at `/host`, never restarts and
mounts no service-account token. What a script writes to `/dev/termination-log` is the pod's
termination message (at most 4 KiB): how the scripts report back.
"""

from __future__ import annotations

from typing import Any

from joinops.clusters.kube import KubeCluster
from joinops.errors import ClusterConflict, ClusterNotFound

MANAGED_LABELS = {"app.kubernetes.io/managed-by": "joinops"}


def namespace(name: str) -> dict[str, Any]:
    """The agent namespace; its pods are privileged, so Pod Security must allow that here."""
    pod_security = {
        f"pod-security.kubernetes.io/{mode}": "privileged" for mode in ("enforce", "audit", "warn")
    }
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": {**MANAGED_LABELS, **pod_security}},
    }


def ensure_namespace(cluster: KubeCluster, name: str) -> None:
    """Create the agent namespace unless it is there (or made meanwhile by a parallel check).
    Read first: it is there for every pod but a cluster's first, and a create refused as a
    conflict costs both sides a whole create, and the client an error, for nothing."""
    try:
        cluster.call_json("get", f"namespaces/{name}", cluster.core.read_namespace, name)
        return
    except ClusterNotFound:
        pass
    create_namespace(cluster, name)


def create_namespace(cluster: KubeCluster, name: str) -> None:
    """Create the agent namespace, unread first: for when a create in it was just answered
    that it is not there (404). One made meanwhile by a parallel run (409) is fine."""
    try:
        cluster.call_json(
            "create", f"namespaces/{name}", cluster.core.create_namespace, namespace(name)
        )
    except ClusterConflict:
        pass


def create_pod(cluster: KubeCluster, namespace: str, pod: dict[str, Any]) -> str:
    """Create one of joinops's pods; its resourceVersion as created (a wait for it may watch
    from there: it need not list first). One request when things are as usual, rather than a
    delete, an ensure and a create every time: a pod of that name left by an interrupted
    earlier run (409) is deleted, then the pod created; a namespace not made yet (404: the
    first such pod in that cluster) is made, then the pod."""
    name = pod["metadata"]["name"]
    create = cluster.core.create_namespaced_pod
    try:
        return _version(cluster.call_json("create", f"pods/{name}", create, namespace, pod))
    except ClusterConflict:
        delete_pod(cluster, namespace, name)
    except ClusterNotFound:
        create_namespace(cluster, namespace)
    return _version(cluster.call_json("create", f"pods/{name}", create, namespace, pod))


def _version(created: dict[str, Any]) -> str:
    return str((created.get("metadata") or {}).get("resourceVersion") or "")


def delete_pod(cluster: KubeCluster, namespace: str, name: str) -> None:
    """Delete one of joinops's pods at once (no grace: it holds nothing to shut down); absent
    is fine."""
    delete = cluster.core.delete_namespaced_pod
    try:
        cluster.call_json("delete", f"pods/{name}", delete, name, namespace, grace_period_seconds=0)
    except ClusterNotFound:
        pass


def privileged_pod(
    *,
    namespace: str,
    name: str,
    node: str,
    image: str,
    script: str,
    pod_labels: dict[str, str],
    container: str = "agent",
    secret_name: str | None = None,
    host_pid: bool = False,
) -> dict[str, Any]:
    """`secret_name`: mounted read-only at /joinops (None: nothing mounted there)."""
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": pod_labels},
        "spec": {
            "nodeName": node,
            "hostPID": host_pid,
            "hostNetwork": True,
            "restartPolicy": "Never",
            "automountServiceAccountToken": False,
            "tolerations": [{"operator": "Exists"}],
            "containers": [
                {
                    "name": container,
                    "image": image,
                    "command": ["/bin/sh", "-c", script],
                    "securityContext": {"privileged": True},
                    "terminationMessagePath": "/dev/termination-log",
                    "volumeMounts": [{"name": "host", "mountPath": "/host"}],
                }
            ],
            "volumes": [{"name": "host", "hostPath": {"path": "/", "type": "Directory"}}],
        },
    }
    if secret_name is not None:
        spec = pod["spec"]
        spec["containers"][0]["volumeMounts"].append(
            {"name": "material", "mountPath": "/joinops", "readOnly": True}
        )
        spec["volumes"].append(
            {"name": "material", "secret": {"secretName": secret_name, "defaultMode": 0o400}}
        )
    return pod
