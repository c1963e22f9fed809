"""The core API through the official client: version, auth, kubeconfig, seed, CRUD, errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import urllib3
import yaml
from ksim_support import Apis, apis_for, body
from kubernetes import client, config

from kubesim import Cluster, NodeSpec, World


def test_version_is_complete_for_the_client(apis: Apis) -> None:
    info = client.VersionApi(apis.raw).get_code()
    assert (info.major, info.minor, info.git_version) == ("1", "31", "v1.31.4")
    assert info.git_tree_state == "clean" and info.compiler == "gc"
    assert info.platform == "linux/amd64" and info.go_version.startswith("go")
    assert (info.emulation_major, info.emulation_minor) == ("1", "31")
    assert (info.min_compatibility_major, info.min_compatibility_minor) == ("1", "30")


def test_older_servers_omit_emulation_fields(world: World) -> None:
    old = world.add_cluster("old", version="v1.30.9")
    info = client.VersionApi(old.api_client()).get_code()
    assert info.git_version == "v1.30.9" and info.emulation_major is None


def test_world_kubeconfig_has_a_context_per_cluster(world: World, tmp_path: Path) -> None:
    a = world.add_cluster("clusterA", nodes=[NodeSpec("a-cp-1", role="control-plane")])
    b = world.add_cluster(
        "clusterB", version="v1.32.2", nodes=[NodeSpec("b-cp-1", role="control-plane")]
    )
    path = world.write_kubeconfig(tmp_path / "kubeconfig")
    doc = yaml.safe_load(path.read_text())
    assert [c["name"] for c in doc["contexts"]] == ["clusterA", "clusterB"]
    for cluster, node in ((a, "a-cp-1"), (b, "b-cp-1")):
        api = config.new_client_from_config(config_file=str(path), context=cluster.name)
        names = [n.metadata.name for n in client.CoreV1Api(api).list_node().items]
        assert names == [node]
    single = a.write_kubeconfig(tmp_path / "a.yaml", context="source")
    api = config.new_client_from_config(config_file=str(single), context="source")
    assert client.VersionApi(api).get_code().git_version == "v1.31.4"


def test_tls_is_verified_against_the_cluster_ca(world: World, tmp_path: Path) -> None:
    a = world.add_cluster("clusterA")
    b = world.add_cluster("clusterB")
    cfg = client.Configuration()
    cfg.host = a.server
    cfg.ssl_ca_cert = b.ca_file  # the wrong CA
    cfg.retries = False
    cfg.api_key = {"authorization": "Bearer " + a.token}
    with pytest.raises((client.ApiException, urllib3.exceptions.HTTPError)):
        client.CoreV1Api(client.ApiClient(cfg)).list_node()


def test_wrong_or_missing_token_is_401(cluster_a: Cluster) -> None:
    for token in ("wrong", None):
        cfg = client.Configuration()
        cfg.host = cluster_a.server
        cfg.ssl_ca_cert = cluster_a.ca_file
        if token:
            cfg.api_key = {"authorization": "Bearer " + token}
        with pytest.raises(client.ApiException) as err:
            client.CoreV1Api(client.ApiClient(cfg)).list_node()
        assert err.value.status == 401
        assert body(err.value) == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "Unauthorized",
            "reason": "Unauthorized",
            "code": 401,
        }


def test_nodes_are_complete_and_labelled_like_kubeadm(apis: Apis) -> None:
    nodes = {n.metadata.name: n for n in apis.core.list_node().items}
    assert set(nodes) == {"a-cp-1", "a-w-1", "a-w-2"}
    cp = nodes["a-cp-1"]
    assert cp.metadata.labels["node-role.kubernetes.io/control-plane"] == ""
    assert [(t.key, t.effect) for t in cp.spec.taints] == [
        ("node-role.kubernetes.io/control-plane", "NoSchedule")
    ]
    worker = nodes["a-w-2"]
    assert worker.metadata.labels["kubernetes.io/hostname"] == "a-w-2"
    assert worker.metadata.labels["kubernetes.io/arch"] == "amd64"
    assert worker.metadata.labels["kubernetes.io/os"] == "linux"
    info = worker.status.node_info
    assert info.kubelet_version == "v1.30.9" and info.container_runtime_version == "cri-o://1.31.1"
    assert info.os_image == "Oracle Linux Server 9.5" and info.machine_id and info.system_uuid
    ready = {c.type: c.status for c in worker.status.conditions}
    assert ready == {
        "Ready": "True",
        "MemoryPressure": "False",
        "DiskPressure": "False",
        "PIDPressure": "False",
    }
    assert worker.status.daemon_endpoints.kubelet_endpoint.port == 10250
    assert worker.metadata.uid and int(worker.metadata.resource_version) > 0


def test_seeded_like_kubeadm(world: World) -> None:
    a = world.add_cluster(
        "clusterA", version="v1.32.2", control_plane_endpoint="cp.clusterA.test:6443"
    )
    core = apis_for(a).core
    names = [n.metadata.name for n in core.list_namespace().items]
    assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]
    cfg = yaml.safe_load(
        core.read_namespaced_config_map("kubeadm-config", "kube-system").data[
            "ClusterConfiguration"
        ]
    )
    assert cfg["kind"] == "ClusterConfiguration"
    assert cfg["controlPlaneEndpoint"] == "cp.clusterA.test:6443"
    assert cfg["kubernetesVersion"] == "v1.32.2" and cfg["clusterName"] == "clusterA"
    assert cfg["networking"]["serviceSubnet"] == "10.96.0.0/12"
    info = core.read_namespaced_config_map("cluster-info", "kube-public")
    kubeconfig = yaml.safe_load(info.data["kubeconfig"])
    cluster = kubeconfig["clusters"][0]["cluster"]
    import base64

    assert base64.b64decode(cluster["certificate-authority-data"]).decode() == a.ca_pem
    assert cluster["server"] == "https://cp.clusterA.test:6443"


def test_label_selectors(apis: Apis, cluster_a: Cluster) -> None:
    cluster_a.add_node(NodeSpec("a-w-3", labels={"tier": "gold"}))
    cluster_a.add_node(NodeSpec("a-w-4", labels={"tier": "silver"}))

    def names(selector: str) -> list[str]:
        return [n.metadata.name for n in apis.core.list_node(label_selector=selector).items]

    assert names("node-role.kubernetes.io/control-plane") == ["a-cp-1"]
    assert names("!node-role.kubernetes.io/control-plane") == ["a-w-1", "a-w-2", "a-w-3", "a-w-4"]
    assert names("tier=gold") == ["a-w-3"]
    assert names("tier!=gold") == ["a-cp-1", "a-w-1", "a-w-2", "a-w-4"]
    assert names("tier in (gold, silver)") == ["a-w-3", "a-w-4"]
    assert names("tier notin (gold),tier") == ["a-w-4"]
    assert names("kubernetes.io/hostname==a-w-1") == ["a-w-1"]
    with pytest.raises(client.ApiException) as err:
        apis.core.list_node(label_selector="tier in (gold")
    assert err.value.status == 400


def test_field_selectors(apis: Apis, cluster_a: Cluster) -> None:
    cluster_a.stop_kubelet("a-w-2")  # so that p3 stays Pending
    cluster_a.add_pod("a-w-1", "p1")
    cluster_a.add_pod("a-w-2", "p2", namespace="apps")
    cluster_a.add_pod("a-w-2", "p3", phase="Pending")
    pods = apis.core.list_pod_for_all_namespaces(field_selector="spec.nodeName=a-w-2")
    assert [(p.metadata.namespace, p.metadata.name) for p in pods.items] == [
        ("apps", "p2"),
        ("default", "p3"),
    ]
    pods = apis.core.list_pod_for_all_namespaces(field_selector="status.phase!=Running")
    assert [p.metadata.name for p in pods.items] == ["p3"]
    pods = apis.core.list_namespaced_pod("default", field_selector="metadata.name=p1")
    assert [p.metadata.name for p in pods.items] == ["p1"]
    nodes = apis.core.list_node(field_selector="metadata.name=a-w-1")
    assert [n.metadata.name for n in nodes.items] == ["a-w-1"]
    with pytest.raises(client.ApiException) as err:
        apis.core.list_node(field_selector="spec.podCIDR=x")
    assert err.value.status == 400
    assert body(err.value)["message"] == "field label not supported: spec.podCIDR"


def test_limit_and_continue(apis: Apis, cluster_a: Cluster) -> None:
    cluster_a.add_nodes(7, prefix="bulk")
    first = apis.core.list_node(limit=4)
    assert len(first.items) == 4
    assert first.metadata.remaining_item_count == 6 and first.metadata._continue
    second = apis.core.list_node(limit=4, _continue=first.metadata._continue)
    third = apis.core.list_node(limit=4, _continue=second.metadata._continue)
    assert third.metadata._continue is None and third.metadata.remaining_item_count is None
    seen = [n.metadata.name for page in (first, second, third) for n in page.items]
    assert seen == sorted(cluster_a.node_names()) and len(seen) == 10


def test_configmap_crud_and_status_bodies(apis: Apis) -> None:
    core = apis.core
    cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="cfg"), data={"a": "1"})
    created = core.create_namespaced_config_map("default", cm)
    assert created.metadata.uid and created.metadata.creation_timestamp
    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_config_map("default", cm)
    assert err.value.status == 409
    assert body(err.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'configmaps "cfg" already exists',
        "reason": "AlreadyExists",
        "details": {"name": "cfg", "kind": "configmaps"},
        "code": 409,
    }
    created.data = {"a": "2"}
    updated = core.replace_namespaced_config_map("cfg", "default", created)
    assert int(updated.metadata.resource_version) > int(created.metadata.resource_version)
    created.data = {"a": "3"}  # still carries the old resourceVersion
    with pytest.raises(client.ApiException) as err:
        core.replace_namespaced_config_map("cfg", "default", created)
    assert err.value.status == 409 and body(err.value)["reason"] == "Conflict"
    assert body(err.value)["message"] == (
        'Operation cannot be fulfilled on configmaps "cfg": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    status = core.delete_namespaced_config_map("cfg", "default")
    assert status["status"] == "Success" and status["details"]["name"] == "cfg"
    with pytest.raises(client.ApiException) as err:
        core.read_namespaced_config_map("cfg", "default")
    assert err.value.status == 404
    assert body(err.value)["details"] == {"name": "cfg", "kind": "configmaps"}
    assert body(err.value)["message"] == 'configmaps "cfg" not found'


def test_generate_name_and_missing_namespace(apis: Apis) -> None:
    cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(generate_name="job-"))
    made = apis.core.create_namespaced_config_map("default", cm)
    assert made.metadata.name.startswith("job-") and len(made.metadata.name) == 9
    with pytest.raises(client.ApiException) as err:
        apis.core.create_namespaced_config_map("nowhere", cm)
    assert (
        err.value.status == 404 and body(err.value)["message"] == 'namespaces "nowhere" not found'
    )


def test_invalid_objects_are_422(apis: Apis) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "empty"},
        "spec": {"containers": []},
    }
    with pytest.raises(client.ApiException) as err:
        apis.core.create_namespaced_pod("default", pod)
    assert err.value.status == 422
    status = body(err.value)
    assert status["reason"] == "Invalid"
    assert status["message"] == 'Pod "empty" is invalid: spec.containers: Required value'
    assert status["details"] == {
        "name": "empty",
        "kind": "Pod",
        "causes": [
            {
                "reason": "FieldValueRequired",
                "message": "Required value",
                "field": "spec.containers",
            }
        ],
    }
    cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="Bad_Name"))
    with pytest.raises(client.ApiException) as err:
        apis.core.create_namespaced_config_map("default", cm)
    assert err.value.status == 422
    assert body(err.value)["message"].startswith(
        'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase '
        "RFC 1123 subdomain"
    )


def test_secrets_string_data_is_stored_base64(apis: Apis, cluster_a: Cluster) -> None:
    secret = client.V1Secret(metadata=client.V1ObjectMeta(name="s"), string_data={"k": "v"})
    made = apis.core.create_namespaced_secret("kube-system", secret)
    assert made.data == {"k": "dg=="} and made.type == "Opaque"
    assert cluster_a.secret_values("kube-system", "s") == {"k": "v"}


def test_namespace_lifecycle(apis: Apis, cluster_a: Cluster, world: World) -> None:
    apis.core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="joinops")))
    cluster_a.add_pod("a-w-1", "agent", namespace="joinops")
    ns = apis.core.delete_namespace("joinops")
    assert ns["status"]["phase"] == "Terminating"
    world.wait_for(lambda: cluster_a.namespace("joinops") is None)
    assert cluster_a.pods(namespace="joinops") == []


def test_pod_created_through_the_api_starts_on_its_node(apis: Apis, cluster_a: Cluster) -> None:
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="web", labels={"app": "web"}),
        spec=client.V1PodSpec(
            node_name="a-w-1", containers=[client.V1Container(name="web", image="nginx:1.27")]
        ),
    )
    made = apis.core.create_namespaced_pod("default", pod)
    assert made.status.phase == "Pending"
    cluster_a.wait_for(
        lambda: (cluster_a.pod("default", "web") or {})["status"]["phase"] == "Running"
    )
    running = apis.core.read_namespaced_pod("web", "default")
    assert running.status.container_statuses[0].ready is True
    assert {c.type: c.status for c in running.status.conditions}["Ready"] == "True"
    assert (
        running.spec.restart_policy == "Always"
        and running.spec.termination_grace_period_seconds == 30
    )
    unbound = apis.core.create_namespaced_pod(
        "default",
        client.V1Pod(
            metadata=client.V1ObjectMeta(name="floating"),
            spec=client.V1PodSpec(
                containers=[client.V1Container(name="c", image="busybox")],
                scheduler_name="no-such-scheduler",  # no scheduler binds it
            ),
        ),
    )
    assert unbound.status.phase == "Pending"
    apis.core.delete_namespaced_pod("floating", "default")  # unbound: gone at once
    assert cluster_a.pod("default", "floating") is None


def test_request_log(apis: Apis, cluster_a: Cluster) -> None:
    cluster_a.reset_requests()
    apis.core.list_node(label_selector="node-role.kubernetes.io/control-plane")
    with pytest.raises(client.ApiException):
        apis.core.read_node("ghost")
    listed, missing = cluster_a.requests
    assert (listed.method, listed.verb, listed.resource, listed.status) == (
        "GET",
        "list",
        "nodes",
        200,
    )
    assert listed.query == {"labelSelector": "node-role.kubernetes.io/control-plane"}
    assert listed.bytes_out > 0
    assert (missing.verb, missing.name, missing.status, missing.path) == (
        "get",
        "ghost",
        404,
        "/api/v1/nodes/ghost",
    )
