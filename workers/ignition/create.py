"""Creating the material an Ignition needs, with the same code as a migration
(`workers.material`): the bootstrap-token Secret, and for a control plane the certificate
upload on an existing control plane. A failed upload deletes the token again.

With `--no-create` the CLI writes `commands_script(...)` instead: the commands an operator runs.
"""

from __future__ import annotations

import logging
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass

from joinops.clusters.kube import KubeCluster
from joinops.errors import ClusterError
from joinops.joinmaterial import KUBEADM_CERTS_LIFETIME
from joinops.settings import Settings
from workers import agent, material
from workers.ignition.prepare import Prepared

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Created:
    token_secret: str
    token_expires_at: float
    certs_host: str = ""
    certs_expire_at: float = 0.0
    upload_pod: str = ""

    @property
    def valid_until(self) -> float:
        ends = [self.token_expires_at] + ([self.certs_expire_at] if self.certs_expire_at else [])
        return min(ends)


def create(
    cluster: KubeCluster,
    prepared: Prepared,
    *,
    settings: Settings,
    request_id: str,
    description: str,
    clock: Callable[[], float] = time.time,
) -> Created:
    """The token Secret, then (control plane) the certificate upload; the token goes again if
    the upload fails."""
    now = clock()
    material.create_token(
        cluster,
        prepared.token,
        prepared.ask.ttl,
        description,
        agent.labels(request_id, "ignition-token"),
        now=now,
    )
    created = Created(prepared.token.secret_name, now + prepared.ask.ttl.total_seconds())
    if prepared.certificate_key is None:
        return created
    try:
        material.upload_certs(
            cluster,
            namespace=settings.agent.namespace,
            request_id=request_id,
            node=prepared.upload_host,
            image=settings.agent.image,
            certificate_key=prepared.certificate_key,
            timeout=settings.timeouts.upload_certs.total_seconds(),
            clock=clock,
        )
    except BaseException:
        delete_token_quietly(cluster, prepared.token.id)
        raise
    uploaded = clock()
    return Created(
        created.token_secret,
        created.token_expires_at,
        certs_host=prepared.upload_host,
        certs_expire_at=uploaded + KUBEADM_CERTS_LIFETIME.total_seconds(),
        upload_pod=f"{settings.agent.namespace}/{agent.upload_pod_name(request_id)}",
    )


def delete_token_quietly(cluster: KubeCluster, token_id: str) -> None:
    try:
        material.delete_token(cluster, token_id)
    except ClusterError as e:
        log.warning("could not delete bootstrap token %s in %s: %s", token_id, cluster.name, e)


def commands_script(prepared: Prepared, description: str) -> str:
    """What an operator runs on a control plane when joinops creates nothing (`--no-create`):
    the exact commands that make the file valid. It holds the secrets: written 0600, never
    printed."""
    from joinops.joinmaterial import kubeadm_token_ttl

    lines = [
        "#!/bin/sh",
        f"# joinops: run as root on a control plane of {prepared.ask.cluster} "
        f"(e.g. {prepared.upload_host}) before the new host boots.",
        "# It holds the join secret: delete this file afterwards.",
        "set -e",
        f"kubeadm token create {prepared.token.value} --ttl "
        f"{kubeadm_token_ttl(prepared.ask.ttl)} --description {shlex.quote(description)}",
    ]
    if prepared.certificate_key is not None:
        lines.append(
            "kubeadm init phase upload-certs --upload-certs --certificate-key "
            f"{prepared.certificate_key}"
        )
    return "\n".join(lines) + "\n"


def token_description(who: str) -> str:
    return f"joinops ignition for {who}"
