"""The clean-up's last part: approve the moved node's kubelet serving certificate.

A kubelet whose configuration sets `serverTLSBootstrap: true` (kubeadm copies the target's
`kube-system/kubelet-config` onto the node at join) asks the `kubernetes.io/kubelet-serving`
signer for its serving certificate with a CertificateSigningRequest, and nothing in a kubeadm
cluster approves it: the controller manager's csrapproving controller approves only kubelet
client certificates. Until someone does, the API server cannot reach the kubelet over TLS, so
`kubectl logs` and `kubectl exec` on the node's pods fail, although the move "succeeded".

So, only when the target's kubelet-config asks for it, this waits a short while (a watch, no
polling) for the node's request and approves exactly the requests `workers.csr_judge` finds are
the node's own; any other pending request that names the node is left alone, and the line says
why. It never fails the step: the node is in the target whatever happens here, and the line
says what to run by hand.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from kubernetes import client

from joinops.clusters import pages, watches
from joinops.clusters.kube import KubeCluster
from joinops.clusters.kubeletconfig import read_kubelet_config
from joinops.errors import ClusterError
from joinops.requests import step_texts
from workers import csr_judge
from workers.csr_judge import Csr, NodeIdentity, read_csr
from workers.run import Run

log = logging.getLogger(__name__)

WAIT_SECONDS = 30.0  # for the node's request: its kubelet files it within seconds of starting
CSRS = "certificatesigningrequests (kubelet-serving)"
SELECTOR = f"spec.signerName={csr_judge.SERVING_SIGNER}"


def approve_for_run(run: Run) -> str:
    """The clean-up's call: the moved node, in the target, for this request."""
    return approve_serving_csrs(
        run.target,
        run.request.node,
        run.id,
        deadline=run.ctx.clock() + WAIT_SECONDS,
        clock=run.ctx.clock,
    )


def approve_serving_csrs(
    target: KubeCluster,
    node: str,
    request_id: str,
    *,
    deadline: float,
    clock: Callable[[], float] = time.time,
) -> str:
    """A line for the thread ("" when the target's kubelets do not ask for serving
    certificates: then no CSR is read). Never raises a ClusterError."""
    started = clock()
    try:
        if not read_kubelet_config(target).server_tls_bootstrap:
            return ""
        identity = csr_judge.node_identity(
            target.call("get", f"nodes/{node}", target.core.read_node, node)
        )
        api = client.CertificatesV1Api(target.api_client)
        found = watches.wait_for(
            target,
            CSRS,
            api.list_certificate_signing_request,
            matches=lambda c: _awaited(read_csr(c), identity),
            deadline=deadline,
            clock=clock,
            field_selector=SELECTOR,
        )
        listing = pages.list_all(
            target, CSRS, api.list_certificate_signing_request, field_selector=SELECTOR
        )
    except ClusterError as e:
        return step_texts.serving_certs_unchecked(node, target.name, e.detail)
    items = list(listing.items or [])
    lines, approved = _settle(target, api, items, identity, request_id)
    now = next((i for i in items if found and i.metadata.name == found.metadata.name), found)
    headline = _headline(node, target, approved, now, deadline - started)
    return " ".join(line for line in (headline, *lines) if line)


def _awaited(csr: Csr, node: NodeIdentity) -> bool:
    """The node's own request, pending; or approved since the node (re)joined (a rerun)."""
    if not csr_judge.is_the_nodes(csr, node):
        return False
    fresh = node.since is None or (csr.created is not None and csr.created >= node.since)
    return csr.pending or (csr.approved and fresh)


def _settle(
    target: KubeCluster,
    api: client.CertificatesV1Api,
    items: list[Any],
    identity: NodeIdentity,
    request_id: str,
) -> tuple[list[str], list[str]]:
    """Approve the node's own pending requests; say why others that name it are left alone."""
    lines: list[str] = []
    approved: list[str] = []
    for item in items:
        csr = read_csr(item)
        if not csr.pending or not csr_judge.concerns(csr, identity.name):
            continue
        why = csr_judge.refusal(csr, identity)
        if why is not None:
            log.warning("CSR %s left alone in %s: %s", csr.name, target.name, why)
            lines.append(step_texts.serving_csr_left_alone(csr.name, why))
            continue
        try:
            _approve(
                target,
                api,
                item,
                step_texts.serving_csr_approval_message(request_id, identity.name),
            )
        except ClusterError as e:
            lines.append(step_texts.serving_csr_approval_failed(csr.name, target.name, e.detail))
            continue
        log.info("CSR %s of node %s approved in %s", csr.name, identity.name, target.name)
        approved.append(csr.name)
    return lines, approved


def _headline(
    node: str, target: KubeCluster, approved: list[str], found: Any, waited: float
) -> str:
    if approved:
        return step_texts.serving_certs_approved(node, approved)
    if found is None:
        return step_texts.serving_csr_not_seen(node, target.name, waited)
    csr = read_csr(found)
    return step_texts.serving_cert_already_approved(node, csr.name) if csr.approved else ""


def _approve(target: KubeCluster, api: client.CertificatesV1Api, item: Any, message: str) -> None:
    """`kubectl certificate approve`: an Approved condition, through the approval subresource."""
    name = item.metadata.name
    if item.status is None:
        item.status = client.V1CertificateSigningRequestStatus()
    item.status.conditions = [
        *(item.status.conditions or []),
        client.V1CertificateSigningRequestCondition(
            type="Approved",
            status="True",
            reason="JoinopsApprove",
            message=message,
            last_update_time=datetime.now(UTC),
        ),
    ]
    item.api_version, item.kind = "certificates.k8s.io/v1", "CertificateSigningRequest"
    target.call(
        "update",
        f"certificatesigningrequests/{name}/approval",
        api.replace_certificate_signing_request_approval,
        name,
        item,
    )
