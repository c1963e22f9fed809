"""kubesim's kubelet-config and CertificateSigningRequests, through the official client.

Sources read: cmd/kubeadm/app/phases/kubelet/config.go and cmd/kubeadm/app/componentconfigs/
kubelet.go (the kubelet-config ConfigMap kubeadm writes); pkg/kubelet/certificate/kubelet.go (the
kubelet's serving-certificate request); pkg/registry/certificates/certificates/strategy.go and
pkg/apis/certificates/validation (what create, update, /status and /approval keep);
plugin/pkg/admission/certificates/approval/admission.go (`approve` on the signer);
pkg/controller/certificates/signer/signer.go (the signer: certificate, or Failed).
"""

from __future__ import annotations

import base64

import pytest
import yaml
from cryptography import x509
from cryptography.x509.oid import NameOID
from ksim_support import body
from kubernetes import client

from kubesim import NodeSpec, World
from kubesim.csr_objects import KUBELET_CLIENT, KUBELET_SERVING

APPROVER = {"apiGroups": ["certificates.k8s.io"], "verbs": ["approve"], "resources": ["signers"]}
CSR_RULES = {
    "apiGroups": ["certificates.k8s.io"],
    "resources": ["certificatesigningrequests", "certificatesigningrequests/approval"],
    "verbs": ["get", "list", "watch", "update"],
}


@pytest.fixture
def bootstrapping(world: World):  # type: ignore[no-untyped-def]
    return world.add_cluster(
        "clusterB",
        cgroup_driver="cgroupfs",
        server_tls_bootstrap=True,
        nodes=[NodeSpec("b-cp-1", role="control-plane"), NodeSpec("b-w-1")],
    )


def certs_api(cluster) -> client.CertificatesV1Api:  # type: ignore[no-untyped-def]
    return client.CertificatesV1Api(cluster.api_client())


def approve(api: client.CertificatesV1Api, name: str, kind: str = "Approved") -> object:
    """What `kubectl certificate approve` does: GET, add the condition, PUT .../approval."""
    csr = api.read_certificate_signing_request(name)
    csr.status.conditions = [
        *(csr.status.conditions or []),
        client.V1CertificateSigningRequestCondition(
            type=kind, status="True", reason="KubectlApprove", message="test"
        ),
    ]
    return api.replace_certificate_signing_request_approval(name, csr)


def test_every_cluster_has_the_kubelet_config_kubeadm_writes(world, bootstrapping):
    """`kubelet-config`, key `kubelet`: a KubeletConfiguration with kubeadm's defaults (systemd
    unless set; serverTLSBootstrap only when true) and the component-config hash annotation."""
    plain = world.add_cluster("clusterA")
    core = client.CoreV1Api(plain.api_client())
    cm = core.read_namespaced_config_map("kubelet-config", "kube-system")
    doc = yaml.safe_load(cm.data["kubelet"])
    assert doc["kind"] == "KubeletConfiguration"
    assert doc["apiVersion"] == "kubelet.config.k8s.io/v1beta1"
    assert doc["cgroupDriver"] == "systemd" and doc["rotateCertificates"] is True
    assert "serverTLSBootstrap" not in doc
    assert cm.metadata.annotations["kubeadm.kubernetes.io/component-config.hash"].startswith(
        "sha256:"
    )
    core_b = client.CoreV1Api(bootstrapping.api_client())
    doc_b = yaml.safe_load(
        core_b.read_namespaced_config_map("kubelet-config", "kube-system").data["kubelet"]
    )
    assert doc_b["cgroupDriver"] == "cgroupfs" and doc_b["serverTLSBootstrap"] is True


def test_a_bootstrapping_kubelet_files_its_serving_request(world, bootstrapping):
    """Each kubelet asks kubernetes.io/kubelet-serving as system:node:<node>, with CN/O of a
    node and its Node's addresses as SANs; a cluster without serverTLSBootstrap gets none."""
    api = certs_api(bootstrapping)
    items = world.wait_for(
        lambda: len(found := api.list_certificate_signing_request().items) == 2 and found
    )
    by_user = {c.spec.username: c for c in items}
    csr = by_user["system:node:b-w-1"]
    assert csr.metadata.name.startswith("csr-")
    assert csr.spec.signer_name == KUBELET_SERVING
    assert csr.spec.groups == ["system:nodes", "system:authenticated"]
    assert csr.spec.usages == ["digital signature", "key encipherment", "server auth"]
    request = x509.load_pem_x509_csr(base64.b64decode(csr.spec.request))
    assert request.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == (
        "system:node:b-w-1"
    )
    assert [a.value for a in request.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == [
        "system:nodes"
    ]
    sans = request.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == ["b-w-1"]
    ip = [str(i) for i in sans.get_values_for_type(x509.IPAddress)]
    assert ip == [world.host("b-w-1").internal_ip]
    listed = api.list_certificate_signing_request(
        field_selector=f"spec.signerName={KUBELET_CLIENT}"
    )
    assert listed.items == []
    plain = world.add_cluster("clusterA", nodes=[NodeSpec("a-w-1")])
    assert certs_api(plain).list_certificate_signing_request().items == []


def test_an_approved_serving_request_gets_a_certificate_from_the_cluster_ca(world, bootstrapping):
    """Approval through the subresource (the only way to set Approved), then the signer."""
    api = certs_api(bootstrapping)
    name = bootstrapping.file_csr("b-w-1")
    approve(api, name)
    signed = world.wait_for(lambda: api.read_certificate_signing_request(name).status.certificate)
    cert = x509.load_pem_x509_certificate(base64.b64decode(signed))
    cert.verify_directly_issued_by(x509.load_pem_x509_certificate(bootstrapping.ca_pem.encode()))
    assert cert.subject.rfc4514_string() == "CN=system:node:b-w-1,O=system:nodes"
    # a plain update and a /status update cannot approve or un-approve
    csr = api.read_certificate_signing_request(name)
    csr.status.conditions = []
    csr = api.replace_certificate_signing_request(name, csr)
    csr.status.conditions = []
    api.replace_certificate_signing_request_status(name, csr)
    kept = api.read_certificate_signing_request(name).status.conditions
    assert [c.type for c in kept] == ["Approved"]


def test_approving_needs_approve_on_the_signer(world, bootstrapping):
    """The CertificateApproval admission: `approve` on signers/<signerName> (or <domain>/*),
    besides the update of the approval subresource; denied: the real 403 message."""
    api = certs_api(bootstrapping)
    serving = bootstrapping.file_csr("b-w-1")
    kubelet_client = bootstrapping.file_csr("b-w-1", signer=KUBELET_CLIENT)
    only_serving = {**APPROVER, "resourceNames": [KUBELET_SERVING]}
    bootstrapping.rbac.set_rules([CSR_RULES, only_serving])
    with pytest.raises(client.ApiException) as refused:
        approve(api, kubelet_client)
    assert refused.value.status == 403
    assert body(refused.value)["message"] == (
        f'certificatesigningrequests.certificates.k8s.io "{kubelet_client}" is forbidden: user '
        f'not permitted to approve requests with signerName "{KUBELET_CLIENT}"'
    )
    approve(api, serving)
    bootstrapping.rbac.set_rules([CSR_RULES, {**APPROVER, "resourceNames": ["kubernetes.io/*"]}])
    approve(api, kubelet_client)


def test_approved_and_denied_are_exclusive(bootstrapping):
    """The approval update's validation: a CSR is Approved or Denied, never both (422)."""
    api = certs_api(bootstrapping)
    name = bootstrapping.file_csr("b-w-1")
    approve(api, name)
    # the signer writes the certificate once approved: read after it, or the PUT below meets a
    # newer resourceVersion (409) before the validation this test is about
    bootstrapping.wait_for(lambda: api.read_certificate_signing_request(name).status.certificate)
    with pytest.raises(client.ApiException) as refused:
        approve(api, name, kind="Denied")
    assert refused.value.status == 422
    assert "Approved and Denied conditions are mutually exclusive" in body(refused.value)["message"]


def test_the_signer_fails_a_request_that_is_no_kubelet_serving_request(world, bootstrapping):
    """ValidateKubeletServingCSR: approved, but with a client usage it gets Failed, no cert."""
    api = certs_api(bootstrapping)
    name = bootstrapping.file_csr("b-w-1", usages=["digital signature", "client auth"])
    approve(api, name)
    failed = world.wait_for(
        lambda: [
            c
            for c in api.read_certificate_signing_request(name).status.conditions
            if c.type == "Failed"
        ]
    )
    assert failed[0].reason == "SignerValidationFailure"
    assert api.read_certificate_signing_request(name).status.certificate is None


def test_create_records_the_requester_and_checks_the_request(bootstrapping):
    """The requester's identity replaces spec.username; a request that is not PEM is 422."""
    api = certs_api(bootstrapping)
    pem = base64.b64decode(
        api.read_certificate_signing_request(bootstrapping.file_csr("b-w-1")).spec.request
    )
    spec = client.V1CertificateSigningRequestSpec(
        request=base64.b64encode(pem).decode(),
        signer_name=KUBELET_SERVING,
        usages=["digital signature", "server auth"],
        username="system:node:b-w-1",
    )
    made = api.create_certificate_signing_request(
        client.V1CertificateSigningRequest(metadata=client.V1ObjectMeta(name="mine"), spec=spec)
    )
    assert made.spec.username == bootstrapping.rbac.user
    spec.request = base64.b64encode(b"not a request").decode()
    with pytest.raises(client.ApiException) as refused:
        api.create_certificate_signing_request(
            client.V1CertificateSigningRequest(metadata=client.V1ObjectMeta(name="bad"), spec=spec)
        )
    assert refused.value.status == 422


def test_discovery_serves_the_certificates_group(bootstrapping):
    """kubectl finds `csr` and its approval subresource through discovery."""
    raw = bootstrapping.api_client()
    groups = client.ApisApi(raw).get_api_versions().groups
    assert "certificates.k8s.io/v1" in [g.preferred_version.group_version for g in groups]
    resources = client.CertificatesV1Api(raw).get_api_resources().resources
    by_name = {r.name: r for r in resources}
    assert by_name["certificatesigningrequests"].short_names == ["csr"]
    assert not by_name["certificatesigningrequests"].namespaced
    assert "update" in by_name["certificatesigningrequests/approval"].verbs
