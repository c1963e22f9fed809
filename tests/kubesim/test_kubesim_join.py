"""Bootstrap signer, upload-certs, and nodes leaving one cluster to join another."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

import pytest
import urllib3
import yaml
from ksim_support import (
    Apis,
    agent_pod,
    apis_for,
    body,
    join_configuration,
    standard_cluster,
    token_secret,
    upload_certs_pod,
)
from kubernetes import client

from kubesim import Cluster, NodeSpec, World
from kubesim.jws import verify_detached
from kubesim.pki import CertificateAuthority, ca_cert_hash

TOKEN = "abcdef.0123456789abcdef"


def expires_in(world: World, seconds: float) -> str:
    when = datetime.fromtimestamp(world.clock.time() + seconds, tz=UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def cluster_info(cluster: Cluster) -> dict[str, str]:
    return dict(cluster.configmap("kube-public", "cluster-info")["data"])


def make_token(cluster: Cluster, token: str = TOKEN, ttl: float = 900) -> None:
    apis_for(cluster).core.create_namespaced_secret(
        "kube-system", token_secret(token, expires_in(cluster.world, ttl))
    )
    token_id = token.split(".")[0]
    cluster.wait_for(lambda: f"jws-kubeconfig-{token_id}" in cluster_info(cluster))


def start_agent(source: Cluster, node: str, join_yaml: str) -> None:
    core = apis_for(source).core
    if source.namespace("joinops") is None:
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="joinops")))
    secret = client.V1Secret(
        metadata=client.V1ObjectMeta(name=f"join-{node}"), string_data={"join.yaml": join_yaml}
    )
    core.create_namespaced_secret("joinops", secret)
    core.create_namespaced_pod("joinops", agent_pod(node, f"join-{node}"))


def ready(cluster: Cluster, node: str) -> bool:
    obj = cluster.node(node)
    return obj is not None and any(
        c["type"] == "Ready" and c["status"] == "True" for c in obj["status"]["conditions"]
    )


@pytest.fixture
def pair(world: World) -> tuple[Cluster, Cluster]:
    a = standard_cluster(world, "clusterA")
    b = world.add_cluster(
        "clusterB",
        version="v1.31.4",
        control_plane_endpoint="cp.clusterB.test:6443",
        nodes=[NodeSpec("b-cp-1", role="control-plane"), NodeSpec("b-w-1")],
    )
    return a, b


# ---- bootstrap signer ----------------------------------------------------------------------
def test_signer_signs_for_each_token_and_unsigns_on_delete(pair: tuple[Cluster, Cluster]) -> None:
    _, b = pair
    make_token(b)
    info = cluster_info(b)
    assert verify_detached(
        info["kubeconfig"], info["jws-kubeconfig-abcdef"], "abcdef", "0123456789abcdef"
    )
    header = info["jws-kubeconfig-abcdef"].split("..")[0]
    assert header == "eyJhbGciOiJIUzI1NiIsImtpZCI6ImFiY2RlZiJ9"  # {"alg":"HS256","kid":"abcdef"}
    apis_for(b).core.delete_namespaced_secret("bootstrap-token-abcdef", "kube-system")
    b.wait_for(lambda: "jws-kubeconfig-abcdef" not in cluster_info(b))


def test_token_cleaner_removes_expired_tokens(world: World, pair: tuple[Cluster, Cluster]) -> None:
    _, b = pair
    make_token(b, ttl=60)
    world.advance_clock(120)
    assert b.secret("kube-system", "bootstrap-token-abcdef") is None
    b.wait_for(lambda: "jws-kubeconfig-abcdef" not in cluster_info(b))


def test_tokens_without_signing_usage_are_not_signed(pair: tuple[Cluster, Cluster]) -> None:
    _, b = pair
    apis_for(b).core.create_namespaced_secret("kube-system", token_secret(TOKEN, signing=False))
    apis_for(b).core.create_namespaced_secret(
        "kube-system", token_secret("zzzzzz.0123456789abcdef")
    )
    b.wait_for(lambda: "jws-kubeconfig-zzzzzz" in cluster_info(b))
    assert "jws-kubeconfig-abcdef" not in cluster_info(b)


# ---- upload-certs ------------------------------------------------------------------------
def pod_phase(cluster: Cluster, name: str, namespace: str = "kube-system") -> str:
    return str((cluster.pod(namespace, name) or {}).get("status", {}).get("phase", ""))


def test_upload_certs_on_a_control_plane(pair: tuple[Cluster, Cluster]) -> None:
    _, b = pair
    key = secrets.token_hex(32)
    apis_for(b).core.create_namespaced_pod("kube-system", upload_certs_pod("b-cp-1", key))
    b.wait_for(lambda: pod_phase(b, "upload-certs") == "Succeeded")
    certs = b.secret("kube-system", "kubeadm-certs")
    assert set(certs["data"]) == {
        "ca.crt",
        "ca.key",
        "etcd-ca.crt",
        "etcd-ca.key",
        "front-proxy-ca.crt",
        "front-proxy-ca.key",
        "sa.key",
        "sa.pub",
    }
    assert list(b.uploaded_cert_keys) == [key]


@pytest.mark.parametrize(
    ("node", "key", "message"),
    [
        ("b-w-1", "a" * 64, "not a control-plane node"),
        ("b-cp-1", "not-hex", "error decoding certificate key"),
    ],
)
def test_upload_certs_failures(
    pair: tuple[Cluster, Cluster], node: str, key: str, message: str
) -> None:
    _, b = pair
    pod = apis_for(b).core.create_namespaced_pod("kube-system", upload_certs_pod(node, key))
    b.wait_for(lambda: pod_phase(b, "upload-certs") == "Failed")
    failed = apis_for(b).core.read_namespaced_pod(pod.metadata.name, "kube-system")
    assert message in failed.status.message
    assert failed.status.container_statuses[0].state.terminated.exit_code == 1
    assert b.secret("kube-system", "kubeadm-certs") is None


# ---- joining -----------------------------------------------------------------------------
def test_worker_moves_from_a_to_b(world: World, pair: tuple[Cluster, Cluster]) -> None:
    a, b = pair
    a.add_pod("a-w-1", "web")
    make_token(b)
    start_agent(a, "a-w-1", join_configuration(b.host_port, TOKEN, [b.ca_cert_hash], "a-w-1"))
    b.wait_for(lambda: ready(b, "a-w-1"))
    left = a.node("a-w-1")  # kubeadm reset leaves the Node object behind
    assert {c["type"]: c["status"] for c in left["status"]["conditions"]}["Ready"] == "Unknown"
    assert "node.kubernetes.io/unreachable" in {t["key"] for t in left["spec"]["taints"]}
    assert a.pods(node="a-w-1") == []  # the agent pod went too, it never reported success
    joined = apis_for(b).core.read_node("a-w-1")
    assert joined.status.node_info.kubelet_version == "v1.31.4"
    assert "node-role.kubernetes.io/control-plane" not in joined.metadata.labels
    assert not joined.spec.taints
    assert world.host("a-w-1").cluster == "clusterB"
    assert world.join_failures == []


def test_new_node_is_tainted_not_ready_until_its_kubelet_is_ready(
    pair: tuple[Cluster, Cluster],
) -> None:
    a, b = pair
    make_token(b)
    start_agent(a, "a-w-1", join_configuration(b.host_port, TOKEN, [b.ca_cert_hash], "a-w-1"))
    b.wait_for(lambda: b.node("a-w-1") is not None)
    first = b.node("a-w-1")
    if not ready(b, "a-w-1"):
        assert {t["key"] for t in first["spec"]["taints"]} == {"node.kubernetes.io/not-ready"}
    b.wait_for(lambda: ready(b, "a-w-1"))
    assert "taints" not in b.node("a-w-1")["spec"]


def test_worker_joins_as_control_plane_with_uploaded_certs(
    world: World, pair: tuple[Cluster, Cluster]
) -> None:
    a, b = pair
    key = secrets.token_hex(32)
    apis_for(b).core.create_namespaced_pod("kube-system", upload_certs_pod("b-cp-1", key))
    b.wait_for(lambda: pod_phase(b, "upload-certs") == "Succeeded")
    make_token(b)
    config = join_configuration(
        "cp.clusterB.test:6443", TOKEN, [b.ca_cert_hash], "a-w-1", certificate_key=key
    )
    world.hold_control_plane_phase()
    start_agent(a, "a-w-1", config)
    b.wait_for(lambda: ready(b, "a-w-1"))
    # kubeadm: the kubelet (node Ready) before the control-plane-join phase
    assert "node-role.kubernetes.io/control-plane" not in b.node("a-w-1")["metadata"]["labels"]
    assert b.pod("kube-system", "etcd-a-w-1") is None
    world.hold_control_plane_phase(False)
    b.wait_for(
        lambda: "node-role.kubernetes.io/control-plane" in b.node("a-w-1")["metadata"]["labels"]
    )
    node = b.node("a-w-1")
    for component in ("etcd", "kube-apiserver"):
        pod = b.pod("kube-system", f"{component}-a-w-1")
        assert pod["metadata"]["annotations"]["kubernetes.io/config.mirror"]
        assert any(
            c["type"] == "Ready" and c["status"] == "True" for c in pod["status"]["conditions"]
        )
    assert {t["key"] for t in node["spec"]["taints"]} == {"node-role.kubernetes.io/control-plane"}
    assert sorted(b.control_plane_nodes()) == ["a-w-1", "b-cp-1"]


def _invalid_case(world: World, a: Cluster, b: Cluster, case: str) -> str:
    key = secrets.token_hex(32)
    endpoint, hashes, cert_key, token = b.host_port, [b.ca_cert_hash], None, TOKEN
    if case != "missing token":
        make_token(b, ttl=60)
    if case == "expired token":
        world.advance_clock(120)
    elif case == "wrong CA hash":
        hashes = [a.ca_cert_hash]
    elif case == "wrong endpoint":
        endpoint = "127.0.0.1:1"
    elif case == "control plane without uploaded certs":
        endpoint, cert_key = "cp.clusterB.test:6443", key
    elif case == "control plane on a target without controlPlaneEndpoint":
        b = world.add_cluster("clusterC", nodes=[NodeSpec("c-cp-1", role="control-plane")])
        make_token(b)
        endpoint, hashes, cert_key = b.host_port, [b.ca_cert_hash], key
    elif case == "wrong token secret":
        token = "abcdef.ffffffffffffffff"
    start_agent(a, "a-w-1", join_configuration(endpoint, token, hashes, "a-w-1", cert_key))
    return world.wait_for(lambda: world.join_failure("a-w-1"))


@pytest.mark.parametrize(
    ("case", "reason"),
    [
        ("missing token", "there is no JWS signed token in the cluster-info ConfigMap"),
        ("expired token", "there is no JWS signed token in the cluster-info ConfigMap"),
        ("wrong token secret", "failed to verify JWS signature"),
        ("wrong CA hash", "none of the public keys"),
        ("wrong endpoint", "connection refused"),
        ("control plane without uploaded certs", 'secrets "kubeadm-certs" not found'),
        (
            "control plane on a target without controlPlaneEndpoint",
            "doesn't have a stable controlPlaneEndpoint",
        ),
    ],
)
def test_invalid_join_material(
    world: World, pair: tuple[Cluster, Cluster], case: str, reason: str
) -> None:
    a, b = pair
    found = _invalid_case(world, a, b, case)
    assert reason in found
    assert all(c.node("a-w-1") is None for c in world.clusters.values() if c is not a)
    assert not ready(a, "a-w-1")
    assert world.host("a-w-1").cluster is None


def test_kubelet_newer_than_target_cannot_join(world: World) -> None:
    a = world.add_cluster(
        "new",
        version="v1.32.1",
        nodes=[NodeSpec("n-cp-1", role="control-plane"), NodeSpec("n-w-1")],
    )
    b = world.add_cluster(
        "old", version="v1.31.4", nodes=[NodeSpec("o-cp-1", role="control-plane")]
    )
    make_token(b)
    start_agent(a, "n-w-1", join_configuration(b.host_port, TOKEN, [b.ca_cert_hash], "n-w-1"))
    assert "kubelet version is higher" in world.wait_for(lambda: world.join_failure("n-w-1"))


def test_ipv6_endpoint_parses(world: World) -> None:
    a = standard_cluster(world)
    b = world.add_cluster(
        "v6", control_plane_endpoint="[::1]:6443", nodes=[NodeSpec("v-cp-1", role="control-plane")]
    )
    make_token(b)
    start_agent(a, "a-w-1", join_configuration("[::1]:6443", TOKEN, [b.ca_cert_hash], "a-w-1"))
    b.wait_for(lambda: ready(b, "a-w-1"))


def test_agent_without_privileges_fails_and_the_node_stays(
    world: World, apis: Apis, cluster_a: Cluster
) -> None:
    apis.core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="joinops")))
    apis.core.create_namespaced_secret(
        "joinops",
        client.V1Secret(
            metadata=client.V1ObjectMeta(name="join"),
            string_data={"join.yaml": join_configuration("127.0.0.1:1", TOKEN, [], "a-w-1")},
        ),
    )
    apis.core.create_namespaced_pod("joinops", agent_pod("a-w-1", "join", privileged=False))
    reason = world.wait_for(lambda: world.join_failure("a-w-1"))
    assert "not privileged" in reason
    assert cluster_a.pod("joinops", "joinops-agent-a-w-1")["status"]["phase"] == "Failed"
    assert ready(cluster_a, "a-w-1") and world.host("a-w-1").cluster == "clusterA"


def test_moving_the_last_control_plane_destroys_the_source(world: World) -> None:
    a = world.add_cluster("solo", nodes=[NodeSpec("s-cp-1", role="control-plane")])
    b = world.add_cluster(
        "clusterB",
        control_plane_endpoint="cp.clusterB.test:6443",
        nodes=[NodeSpec("b-cp-1", role="control-plane")],
    )
    key = secrets.token_hex(32)
    apis_for(b).core.create_namespaced_pod("kube-system", upload_certs_pod("b-cp-1", key))
    b.wait_for(lambda: pod_phase(b, "upload-certs") == "Succeeded")
    make_token(b)
    source = apis_for(a)
    start_agent(
        a,
        "s-cp-1",
        join_configuration(
            "cp.clusterB.test:6443", TOKEN, [b.ca_cert_hash], "s-cp-1", certificate_key=key
        ),
    )
    b.wait_for(lambda: ready(b, "s-cp-1"))
    assert a.destroyed
    source.raw.configuration.retries = 0
    with pytest.raises(urllib3.exceptions.MaxRetryError) as err:
        client.CoreV1Api(client.ApiClient(source.raw.configuration)).list_node()
    assert "refused" in str(err.value).lower()
    assert [e.kind for e in world.events if e.cluster == "solo"][-2:] == [
        "host-reset",
        "cluster-destroyed",
    ]


def test_ock_profile_joins_too(world: World, pair: tuple[Cluster, Cluster]) -> None:
    a, b = pair
    make_token(b)
    core = apis_for(a).core
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="joinops")))
    conf = join_configuration(
        b.host_port, TOKEN, [b.ca_cert_hash], "a-w-2", api_version="kubeadm.k8s.io/v1beta3"
    )
    core.create_namespaced_secret(
        "joinops",
        client.V1Secret(
            metadata=client.V1ObjectMeta(name="join"), string_data={"kubeadm.conf": conf}
        ),
    )
    command = (
        "cp /config/kubeadm.conf /host/etc/kubernetes/kubeadm.conf && touch "
        "/host/etc/ocne/reset-kubeadm && chroot /host systemctl restart ocne"
    )
    core.create_namespaced_pod("joinops", agent_pod("a-w-2", "join", command=command))
    b.wait_for(lambda: ready(b, "a-w-2"))
    assert b.node("a-w-2")["status"]["nodeInfo"]["kubeletVersion"] == "v1.30.9"
    assert [e.message for e in world.events if e.kind == "host-reset"] == ["ock"]


def test_kubeadm_config_is_yaml(pair: tuple[Cluster, Cluster]) -> None:
    _, b = pair
    doc = yaml.safe_load(
        b.configmap("kube-system", "kubeadm-config")["data"]["ClusterConfiguration"]
    )
    assert doc["controlPlaneEndpoint"] == "cp.clusterB.test:6443"


# ---- issue 14: pins, proxies, bundles, host leftovers, the watch cache ----------------------
def test_a_join_pinned_to_a_proxys_ca_is_refused_like_kubeadm(
    world: World, pair: tuple[Cluster, Cluster]
) -> None:
    a, b = pair
    proxy = b.add_proxy()
    assert apis_for(b).core.read_node("b-cp-1").metadata.name == "b-cp-1"  # through the proxy
    make_token(b)
    proxy_pin = ca_cert_hash(proxy.ca_pem)
    start_agent(a, "a-w-1", join_configuration(b.host_port, TOKEN, [proxy_pin], "a-w-1"))
    reason = world.wait_for(lambda: world.join_failure("a-w-1"))
    assert "cluster CA found in cluster-info ConfigMap is invalid" in reason
    assert world.host("a-w-1").cluster is None  # reset, in neither cluster
    assert "/etc/cni/net.d/10-calico.conflist" in world.host("a-w-1").leftovers  # not cleaned


def test_any_ca_of_a_cluster_info_bundle_may_be_pinned(
    world: World, pair: tuple[Cluster, Cluster]
) -> None:
    a, b = pair
    rotated = CertificateAuthority("next")
    b.set_cluster_info_cas([rotated.cert_pem])
    make_token(b)
    b.wait_for(
        lambda: any(
            k.startswith("jws-") for k in b.configmap("kube-public", "cluster-info")["data"]
        )
    )
    start_agent(a, "a-w-1", join_configuration(b.host_port, TOKEN, [rotated.cert_hash()], "a-w-1"))
    b.wait_for(lambda: ready(b, "a-w-1"))


def test_a_list_ahead_of_the_watch_cache_answers_the_real_504(
    pair: tuple[Cluster, Cluster],
) -> None:
    _, b = pair
    b.faults.add_too_large_resource_version(path_contains="/pods")
    core = apis_for(b).core
    core.list_namespaced_pod("default")  # no resourceVersion: served
    with pytest.raises(client.ApiException) as raised:
        core.list_namespaced_pod("default", resource_version="1000426")
    assert raised.value.status == 504
    assert raised.value.headers["Retry-After"] == "1"
    status = body(raised.value)
    assert status["reason"] == "Timeout"
    assert status["message"].startswith("Timeout: Too large resource version: ")
    assert status["details"]["causes"] == [
        {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
    ]
