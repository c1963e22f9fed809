"""Pods joinops runs on nodes: the node agent (re-joins a node) and the certificate upload.

Both are privileged, pinned to one node, with the host's `/` at /host; what they must not show
(the JoinConfiguration, the certificate key) travels in a Secret mounted into the pod, never in
its command line or environment, which anyone who can read pods sees. The node agent hands its
work to a transient systemd unit on the host, so the work survives the kubelet being stopped by
`kubeadm reset`.
"""

from __future__ import annotations

from typing import Any

from joinops.requests.ids import is_request_id
from workers import hostcleanup

MANAGED_LABELS = {"app.kubernetes.io/managed-by": "joinops"}
JOIN_KEY = "join-config.yaml"
CERT_KEY = "certificate-key"
HOST_JOIN_FILE = "/var/lib/joinops/join-config.yaml"


def unit_name(request_id: str) -> str:
    """The transient systemd unit on the host: `journalctl -u <this>` shows the join."""
    return f"joinops-join-{request_id}"


def agent_pod_name(request_id: str) -> str:
    return f"joinops-agent-{request_id}"


def join_secret_name(request_id: str) -> str:
    return f"joinops-join-{request_id}"


def upload_pod_name(request_id: str) -> str:
    return f"joinops-upload-certs-{request_id}"


def labels(request_id: str, component: str) -> dict[str, str]:
    return {
        **MANAGED_LABELS,
        "app.kubernetes.io/name": f"joinops-{component}",
        "joinops.io/request": request_id,
    }


def secret(
    namespace: str, name: str, data: dict[str, str], secret_labels: dict[str, str]
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {"name": name, "namespace": namespace, "labels": secret_labels},
        "stringData": data,
    }


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


def _script_id(request_id: str) -> str:
    """The one variable part of the scripts the agent runs as root on a host: a request id that
    joinops made (`req-` and eight hex digits). Node names, cluster names and anything a person
    typed never go into a script; the node is chosen by the pod's `nodeName`."""
    if not is_request_id(request_id):
        raise ValueError(f"not a request id, so not put in a script: {request_id!r}")
    return request_id


def kubeadm_script(request_id: str) -> str:
    unit = unit_name(_script_id(request_id))
    return "\n".join(
        [
            "set -eu",
            f"install -D -m 0600 /joinops/{JOIN_KEY} /host{HOST_JOIN_FILE}",
            f"chroot /host systemd-run --unit={unit} --collect --property=Type=oneshot "
            f"/bin/sh -c 'kubeadm reset -f && {hostcleanup.shell()} && "
            f"kubeadm join --config {HOST_JOIN_FILE}; rc=$?; "
            f"rm -f {HOST_JOIN_FILE}; exit $rc'",
            "exec sleep infinity  # kubeadm reset stops the kubelet, and this pod with it",
        ]
    )


def ock_script(request_id: str) -> str:
    unit = unit_name(_script_id(request_id))
    dropin = "/host/etc/systemd/system/ocne.service.d"
    return "\n".join(
        [
            "set -eu",
            f"install -D -m 0600 /joinops/{JOIN_KEY} /host/etc/kubernetes/kubeadm.conf",
            f"mkdir -p {dropin} /host/etc/ocne",
            f"printf '[Service]\\nEnvironment=ACTION=join\\n' > {dropin}/joinops-action.conf",
            "touch /host/etc/ocne/reset-kubeadm",
            f"chroot /host systemd-run --unit={unit} --collect --property=Type=oneshot "
            "/bin/sh -c 'systemctl daemon-reload && systemctl restart ocne'",
            "exec sleep infinity  # the ocne service resets kubeadm, and this pod goes with it",
        ]
    )


def upload_certs_script() -> str:
    return (
        "exec chroot /host kubeadm init phase upload-certs --upload-certs "
        f'--certificate-key "$(cat /joinops/{CERT_KEY})"'
    )


def privileged_pod(
    *,
    namespace: str,
    name: str,
    node: str,
    image: str,
    script: str,
    secret_name: str,
    pod_labels: dict[str, str],
    host_pid: bool,
) -> dict[str, Any]:
    return {
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
                    "name": "agent",
                    "image": image,
                    "command": ["/bin/sh", "-c", script],
                    "securityContext": {"privileged": True},
                    "volumeMounts": [
                        {"name": "host", "mountPath": "/host"},
                        {"name": "material", "mountPath": "/joinops", "readOnly": True},
                    ],
                }
            ],
            "volumes": [
                {"name": "host", "hostPath": {"path": "/", "type": "Directory"}},
                {"name": "material", "secret": {"secretName": secret_name, "defaultMode": 0o400}},
            ],
        },
    }


def agent_pod(
    *, namespace: str, request_id: str, node: str, image: str, profile: str
) -> dict[str, Any]:
    script = ock_script(request_id) if profile == "ock" else kubeadm_script(request_id)
    return privileged_pod(
        namespace=namespace,
        name=agent_pod_name(request_id),
        node=node,
        image=image,
        script=script,
        secret_name=join_secret_name(request_id),
        pod_labels=labels(request_id, "agent"),
        host_pid=True,
    )


def upload_certs_pod(*, namespace: str, request_id: str, node: str, image: str) -> dict[str, Any]:
    return privileged_pod(
        namespace=namespace,
        name=upload_pod_name(request_id),
        node=node,
        image=image,
        script=upload_certs_script(),
        secret_name=upload_pod_name(request_id),
        pod_labels=labels(request_id, "upload-certs"),
        host_pid=False,
    )
