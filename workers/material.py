"""Creating and removing join material in a target cluster (used by migrations and Ignition)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import yaml

from joinops.clusters import hostpods, watches
from joinops.clusters.etcdmembers import external_etcd
from joinops.clusters.hostpods import ensure_namespace
from joinops.clusters.kube import KubeCluster
from joinops.errors import ClusterConflict, ClusterNotFound
from joinops.joinmaterial import BootstrapToken, token_secret
from workers import agent
from workers.errors import PermanentError


def create_token(
    target: KubeCluster,
    token: BootstrapToken,
    ttl: timedelta,
    description: str,
    token_labels: dict[str, str],
    now: float,
    extra_group: str = "",
) -> None:
    """The bootstrap-token Secret in kube-system, expiring `ttl` after `now`. `extra_group`:
    one more `system:bootstrappers:` group for the token (a return token's, workers.agent)."""
    expires = datetime.fromtimestamp(now, UTC) + ttl
    body = token_secret(token, expires, description, token_labels)
    if extra_group:
        groups = body["stringData"]["auth-extra-groups"]
        body["stringData"]["auth-extra-groups"] = f"{groups},{extra_group}"
    target.call_json(  # the answer is not used: no model built for it
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
) -> dict[str, str] | None:
    """Watch kube-public/cluster-info until it carries `jws-kubeconfig-<token_id>`: its data
    as then seen (the caller may check it further without reading it again), None at the
    deadline."""
    key = f"jws-kubeconfig-{token_id}"

    def get_cluster_info() -> tuple[list[Any], str]:  # only get and watch are granted
        try:
            cm = target.call(
                "get",
                "configmaps/cluster-info",
                target.core.read_namespaced_config_map,
                "cluster-info",
                "kube-public",
            )
        except ClusterNotFound:
            return [], ""
        return [cm], str(cm.metadata.resource_version or "")

    found = watches.wait_for(
        target,
        "configmaps/cluster-info",
        target.core.list_namespaced_config_map,
        "kube-public",
        matches=lambda cm: key in (cm.data or {}),
        deadline=deadline,
        clock=clock,
        relist=get_cluster_info,
        field_selector="metadata.name=cluster-info",
    )
    return None if found is None else dict(found.data or {})


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
    """Run `kubeadm init phase upload-certs` on `node` under `certificate_key`; wait; clean up.
    A target with an external etcd (kubeadm-config's etcd.external) gets its ClusterConfiguration
    as `--config`, so the upload carries the etcd client certificates a control plane needs."""
    name = agent.upload_pod_name(request_id)
    ensure_namespace(target, namespace)  # for the Secret, made first
    config = target.kubeadm_cluster_configuration()
    data = {agent.CERT_KEY: certificate_key}
    if external_etcd(config):  # its client certificates must be uploaded too
        data[agent.KUBEADM_CONFIG_KEY] = yaml.safe_dump(config)
    put_secret(target, namespace, name, data, agent.labels(request_id, "upload-certs"))
    pod = agent.upload_certs_pod(
        namespace=namespace,
        request_id=request_id,
        node=node,
        image=image,
        with_config=agent.KUBEADM_CONFIG_KEY in data,
    )
    try:
        # one left by an interrupted earlier attempt is replaced (`create_pod`); watched from
        # its creation, with no list first
        created = hostpods.create_pod(target, namespace, pod)
        phase, message = wait_for_pod_end(
            target, namespace, name, clock() + timeout, clock, since=created
        )
    finally:
        delete_quietly(target, namespace, "pod", name)
        delete_quietly(target, namespace, "secret", name)
    if phase != "Succeeded":
        raise PermanentError(
            f"the certificate upload on {target.name}'s control plane `{node}` did not finish "
            f"({phase or 'timed out'}{': ' + message if message else ''})"
        )


def wait_for_pod_end(
    cluster: KubeCluster,
    namespace: str,
    name: str,
    deadline: float,
    clock: Callable[[], float],
    since: str = "",
) -> tuple[str, str]:
    """Watch one pod until it Succeeded or Failed; ('', '') at the deadline. `since`: the
    resourceVersion its create answered (watched from there; "": listed first)."""
    pod = watches.wait_for(
        cluster,
        f"pods/{name}",
        cluster.core.list_namespaced_pod,
        namespace,
        matches=lambda p: bool(p.status and p.status.phase in ("Succeeded", "Failed")),
        deadline=deadline,
        clock=clock,
        since=since or None,
        field_selector=f"metadata.name={name}",
    )
    if pod is None:
        return "", ""
    return pod.status.phase, (pod.status.message or "")


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
        cluster.call_json("create", f"secrets/{name}", create, namespace, body)
    except ClusterConflict:
        delete_quietly(cluster, namespace, "secret", name)
        cluster.call_json("create", f"secrets/{name}", create, namespace, body)


def delete_quietly(cluster: KubeCluster, namespace: str, kind: str, name: str) -> None:
    """Delete a namespaced pod or secret; absent is fine. The answer (the object as deleted)
    is not built into the client's model: nothing reads it."""
    calls: dict[str, Any] = {
        "pod": cluster.core.delete_namespaced_pod,
        "secret": cluster.core.delete_namespaced_secret,
    }
    try:
        cluster.call_json(
            "delete", f"{kind}s/{name}", calls[kind], name, namespace, grace_period_seconds=0
        )
    except ClusterNotFound:
        pass
