"""The clean-up approves the moved node's kubelet serving certificate, and nothing else.

Modelled: a kubeadm target whose `kube-system/kubelet-config` sets `serverTLSBootstrap: true`
(cmd/kubeadm/app/phases/kubelet/config.go writes it; `kubeadm join` copies it onto the node), so
the joined kubelet files a `kubernetes.io/kubelet-serving` CertificateSigningRequest
(pkg/kubelet/certificate/kubelet.go) that nothing in the cluster approves; the approval
subresource needs `approve` on the signer (plugin/pkg/admission/certificates/approval), and the
controller manager's signer issues the certificate once approved
(pkg/controller/certificates/signer/signer.go). All through the official client against kubesim.
"""

from __future__ import annotations

import base64
import time

import pytest
from cryptography import x509

from joinops.clusters.kubeletconfig import KubeletConfig, read_kubelet_config
from joinops.errors import ClusterError
from joinops.requests.lifecycle import State
from kubesim.csr_objects import KUBELET_CLIENT
from tests.support.csrs import csrs_held_until_listed
from tests.support.engine import approved_request
from workers.runner import run_request
from workers.serving_certs import approve_serving_csrs


def issued(cluster, name: str) -> x509.Certificate | None:  # type: ignore[no-untyped-def]
    data = (cluster.csr(name) or {}).get("status", {}).get("certificate")
    return x509.load_pem_x509_certificate(base64.b64decode(data)) if data else None


def conditions(cluster, name: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [c["type"] for c in cluster.csr(name)["status"].get("conditions") or []]


def test_a_move_into_a_bootstrapping_target_ends_with_the_nodes_serving_cert_approved(
    world, make_ctx
):
    """The node's own request, filed only once joinops looks (it waits for it), is approved and
    signed; a request with this node's name but an address it does not have, another node's
    request and a client-certificate request with its name stay untouched, and the thread says
    why the first one was left alone."""
    b = world.cluster("clusterB")
    b.set_kubelet_config(server_tls_bootstrap=True)
    foreign = b.file_csr("a-w-1", dns=["a-w-1"], ips=["10.9.9.9"])
    other = b.file_csr("b-w-1")
    client_cert = b.file_csr("a-w-1", signer=KUBELET_CLIENT)
    decoys = {foreign, other, client_cert}
    ctx = make_ctx()
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")
    with csrs_held_until_listed(world, b):
        assert run_request(ctx, request.id) is State.SUCCEEDED, ctx.store.get(request.id).outcome

    assert b.requests_for("watch", "certificatesigningrequests")  # it waited for the request
    own = [c["metadata"]["name"] for c in b.csrs("a-w-1") if c["metadata"]["name"] not in decoys]
    assert len(own) == 1
    assert conditions(b, own[0]) == ["Approved"]
    cert = b.wait_for(lambda: issued(b, own[0]), timeout=10)
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    node_ip = world.host("a-w-1").internal_ip
    assert [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)] == [node_ip]
    cert.verify_directly_issued_by(x509.load_pem_x509_certificate(b.ca_pem.encode()))
    for name in decoys:
        assert conditions(b, name) == [] and issued(b, name) is None, name
    text = ctx.records.get(request.id, "cleanup").message
    assert f"Approved the kubelet serving certificate of `a-w-1` ({own[0]})" in text
    assert f"Left CSR {foreign} alone: SAN 10.9.9.9 is not an address of a-w-1." in text
    assert other not in text and client_cert not in text


def test_a_target_whose_kubelets_do_not_bootstrap_is_never_asked_about_csrs(world, make_ctx):
    """kubeadm's default kubelet-config has no serverTLSBootstrap: the kubelet uses a
    self-signed serving certificate, files no request, and joinops reads no CSR."""
    b = world.cluster("clusterB")
    ctx = make_ctx()
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")

    assert run_request(ctx, request.id) is State.SUCCEEDED, ctx.store.get(request.id).outcome

    assert b.requests_for(resource="certificatesigningrequests") == []
    assert b.csrs() == []
    assert b.requests_for("get", "configmaps")  # it did look at the kubelet-config
    assert "serving certificate" not in ctx.records.get(request.id, "cleanup").message


def test_an_approval_the_api_server_refuses_does_not_fail_the_move(world, make_ctx):
    """Without `approve` on the kubelet-serving signer the approval answers 403; the node is in
    the target all the same, and the thread says what to run."""
    b = world.cluster("clusterB")
    b.set_kubelet_config(server_tls_bootstrap=True)
    b.rbac.deny("approve", "signers")
    ctx = make_ctx()
    request = approved_request(ctx, "a-w-1", "clusterA", "clusterB")

    assert run_request(ctx, request.id) is State.SUCCEEDED, ctx.store.get(request.id).outcome

    [own] = b.csrs("a-w-1")
    name = own["metadata"]["name"]
    assert conditions(b, name) == []
    refused = [r for r in b.requests_for("update", "certificatesigningrequests") if r.name == name]
    assert [r.status for r in refused] == [403]
    text = ctx.records.get(request.id, "cleanup").message
    assert f"Could not approve CSR {name} in clusterB" in text
    assert f"`kubectl certificate approve {name}`" in text


def test_a_request_that_never_comes_is_reported_with_what_to_run(world, tmp_path):
    """A kubelet that has not asked (b-w-1 started before the configuration said so): the wait
    ends at its deadline, and the line says how to find and approve the request later."""
    from tests.support.clusters import registry_for

    world.cluster("clusterB").set_kubelet_config(server_tls_bootstrap=True)
    registry = registry_for(world, tmp_path)
    try:
        target = registry.get("clusterB")
        line = approve_serving_csrs(target, "b-w-1", "r-1", deadline=time.time() + 1.0)
    finally:
        registry.close()
    assert "`b-w-1`'s request did not come within 1 s" in line
    assert "kubectl certificate approve <name>" in line


def test_the_kubelet_config_reads_as_kubeadm_wrote_it(world, tmp_path):
    """The fields kubeadm writes, the defaults without the ConfigMap, and a clear error for
    one that is not YAML (kubeadm join would fail on it)."""
    from tests.support.clusters import registry_for

    b = world.cluster("clusterB")
    b.set_kubelet_config(cgroup_driver="cgroupfs", server_tls_bootstrap=True)
    registry = registry_for(world, tmp_path)
    try:
        target = registry.get("clusterB")
        assert read_kubelet_config(target) == KubeletConfig("cgroupfs", True)
        b.set_kubelet_config()
        assert read_kubelet_config(target) == KubeletConfig("systemd", False)
        target.core.patch_namespaced_config_map(
            "kubelet-config", "kube-system", {"data": {"kubelet": "cgroupDriver: [systemd"}}
        )
        with pytest.raises(ClusterError, match="kube-system/kubelet-config, key `kubelet`"):
            read_kubelet_config(target)
        target.core.delete_namespaced_config_map("kubelet-config", "kube-system")
        assert read_kubelet_config(target) == KubeletConfig(None, False)
    finally:
        registry.close()
