"""Creating and removing join material in a target cluster (used by migrations and Ignition)."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import urllib3
import yaml
from kubernetes import watch
from kubernetes.client.exceptions import ApiException

from joinops.errors import ClusterConflict, ClusterNotFound, ClusterUnreachable
from joinops.joinmaterial import BootstrapToken, ca_cert_hash, token_secret
from joinops.kube import KubeCluster
from workers import agent
from workers.errors import PermanentError


def ensure_namespace(cluster: KubeCluster, name: str) -> None:
    try:
        cluster.call(
            "create", f"namespaces/{name}", cluster.core.create_namespace, agent.namespace(name)
        )
    except ClusterConflict:
        pass  # already there


def create_token(
    target: KubeCluster,
    token: BootstrapToken,
    ttl: timedelta,
    description: str,
    token_labels: dict[str, str],
    now: float,
) -> None:
    """The bootstrap-token Secret in kube-system, expiring `ttl` after `now`."""
    expires = datetime.fromtimestamp(now, UTC) + ttl
    body = token_secret(token, expires, description, token_labels)
    target.call(
        "create",
        f"secrets/{token.secret_name}",
        target.core.create_namespaced_secret,
        "kube-system",
        body,
    )


def delete_token(target: KubeCluster, token_id: str) -> None:
    delete_quietly(target, "kube-system", "secret", f"bootstrap-token-{token_id}")


def wait_for_signature(
    target: KubeCluster, token_id: str, deadline: float, clock: Callable[[], float]
) -> bool:
    """Watch kube-public/cluster-info until it carries `jws-kubeconfig-<token_id>`."""
    key = f"jws-kubeconfig-{token_id}"
    while True:
        left = deadline - clock()
        stream = watch.Watch()
        try:
            for event in stream.stream(
                target.core.list_namespaced_config_map,
                "kube-public",
                field_selector="metadata.name=cluster-info",
                timeout_seconds=max(1, int(min(left, 30))),
                _request_timeout=max(1.0, min(left, 30)) + target.timeout,
            ):
                if key in (event["object"].data or {}):
                    stream.stop()
                    return True
        except ApiException as e:  # the watch bypasses KubeCluster.call: translate here
            raise target._translate("watch", "configmaps/cluster-info", e) from e
        except (urllib3.exceptions.HTTPError, OSError) as e:
            raise ClusterUnreachable(
                target.name,
                f"the API server at {target.server} did not answer ({type(e).__name__})",
            ) from e
        if clock() >= deadline:
            return False


def target_ca_hash(target: KubeCluster) -> str:
    """The CA hash from the kubeconfig's CA, or from kube-public/cluster-info."""
    pem = target.ca_pem
    if pem is None:
        cm = target.call(
            "get",
            "configmaps/cluster-info",
            target.core.read_namespaced_config_map,
            "cluster-info",
            "kube-public",
        )
        info = yaml.safe_load((cm.data or {}).get("kubeconfig", "")) or {}
        data = info["clusters"][0]["cluster"]["certificate-authority-data"]
        pem = base64.b64decode(data)
    return ca_cert_hash(pem)


def upload_certs(
    target: KubeCluster,
    *,
    namespace: str,
    request_id: str,
    node: str,
    image: str,
    certificate_key: str,
    timeout: float,
    clock: Callable[[], float] = time.time,
) -> None:
    """Run `kubeadm init phase upload-certs` on `node` under `certificate_key`; wait; clean up."""
    name = agent.upload_pod_name(request_id)
    ensure_namespace(target, namespace)
    delete_quietly(target, namespace, "pod", name)
    put_secret(
        target,
        namespace,
        name,
        {agent.CERT_KEY: certificate_key},
        agent.labels(request_id, "upload-certs"),
    )
    pod = agent.upload_certs_pod(namespace=namespace, request_id=request_id, node=node, image=image)
    try:
        target.call("create", f"pods/{name}", target.core.create_namespaced_pod, namespace, pod)
        phase, message = wait_for_pod_end(target, namespace, name, clock() + timeout, clock)
    finally:
        delete_quietly(target, namespace, "pod", name)
        delete_quietly(target, namespace, "secret", name)
    if phase != "Succeeded":
        raise PermanentError(
            f"the certificate upload on {target.name}'s control plane `{node}` did not finish "
            f"({phase or 'timed out'}{': ' + message if message else ''})"
        )


def wait_for_pod_end(
    cluster: KubeCluster, namespace: str, name: str, deadline: float, clock: Callable[[], float]
) -> tuple[str, str]:
    """Watch one pod until it Succeeded or Failed; ('', '') at the deadline."""
    while clock() < deadline:
        seconds = max(1.0, deadline - clock())
        stream = watch.Watch()
        for event in stream.stream(
            cluster.core.list_namespaced_pod,
            namespace,
            field_selector=f"metadata.name={name}",
            timeout_seconds=int(min(seconds, 30)) or 1,
            _request_timeout=min(seconds, 30) + cluster.timeout,
        ):
            pod = event["object"]
            phase = pod.status.phase if pod.status else ""
            if phase in ("Succeeded", "Failed"):
                stream.stop()
                return phase, (pod.status.message or "")
    return "", ""


def put_secret(
    cluster: KubeCluster,
    namespace: str,
    name: str,
    data: dict[str, str],
    secret_labels: dict[str, str],
) -> None:
    """Create the Secret; one of the same name left by an earlier run is deleted first.

    Delete and create, not update: joinops needs no right to update Secrets.
    """
    body = agent.secret(namespace, name, data, secret_labels)
    create = cluster.core.create_namespaced_secret
    try:
        cluster.call("create", f"secrets/{name}", create, namespace, body)
    except ClusterConflict:
        delete_quietly(cluster, namespace, "secret", name)
        cluster.call("create", f"secrets/{name}", create, namespace, body)


def delete_quietly(cluster: KubeCluster, namespace: str, kind: str, name: str) -> None:
    """Delete a namespaced pod or secret; absent is fine."""
    calls: dict[str, Any] = {
        "pod": cluster.core.delete_namespaced_pod,
        "secret": cluster.core.delete_namespaced_secret,
    }
    try:
        cluster.call(
            "delete", f"{kind}s/{name}", calls[kind], name, namespace, grace_period_seconds=0
        )
    except ClusterNotFound:
        pass
