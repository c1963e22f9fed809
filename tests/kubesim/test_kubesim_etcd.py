"""A stacked etcd's member list, answered through an etcdctl pod on a control plane, and
external-etcd clusters (kubesim.etcd, kubesim.behaviours.etcdctl)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from ksim_support import apis_for

from kubesim import Cluster, NodeSpec, World

CERTS = (
    "--cacert=/etc/kubernetes/pki/etcd/ca.crt "
    "--cert=/etc/kubernetes/pki/etcd/healthcheck-client.crt "
    "--key=/etc/kubernetes/pki/etcd/healthcheck-client.key"
)


def etcdctl_pod(node: str, action: str, name: str = "etcdctl") -> dict[str, Any]:
    etcdctl = f'chroot /host crictl exec "$id" etcdctl --endpoints=https://127.0.0.1:2379 {CERTS}'
    script = (
        "id=$(chroot /host crictl ps -q --state running --name '^etcd$')\n"
        f"{etcdctl} {action} > /dev/termination-log"
    )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "kube-system"},
        "spec": {
            "nodeName": node,
            "hostNetwork": True,
            "restartPolicy": "Never",
            "tolerations": [{"operator": "Exists"}],
            "containers": [
                {
                    "name": "etcdctl",
                    "image": "busybox",
                    "command": ["/bin/sh", "-c", script],
                    "securityContext": {"privileged": True},
                    "volumeMounts": [{"name": "host", "mountPath": "/host"}],
                }
            ],
            "volumes": [{"name": "host", "hostPath": {"path": "/"}}],
        },
    }


def run(cluster: Cluster, node: str, action: str) -> tuple[str, str]:
    apis_for(cluster).core.create_namespaced_pod("kube-system", etcdctl_pod(node, action))
    ended = cluster.wait_for(
        lambda: (
            (p := cluster.pod("kube-system", "etcdctl"))
            and p["status"]["phase"] in ("Succeeded", "Failed")
            and p
        ),
        10,
    )
    cluster.delete_pod("kube-system", "etcdctl", grace=0)
    cluster.wait_for(lambda: cluster.pod("kube-system", "etcdctl") is None, 10)
    state = ended["status"]["containerStatuses"][0]["state"]["terminated"]
    return ended["status"]["phase"], state.get("message", "")


@pytest.fixture
def trio(world: World) -> Iterator[Cluster]:
    yield world.add_cluster(
        "trio",
        control_plane_endpoint="cp.trio.test:6443",
        nodes=[NodeSpec(f"t-cp-{i}", role="control-plane") for i in (1, 2, 3)],
    )


def test_member_list_is_etcdctls_json_with_health(trio: Cluster) -> None:
    phase, message = run(trio, "t-cp-1", "member list -w json")
    assert phase == "Succeeded"
    listing = json.loads(message.splitlines()[0])
    assert set(listing["header"]) == {"cluster_id", "member_id", "raft_term"}
    names = [m["name"] for m in listing["members"]]
    assert names == ["t-cp-1", "t-cp-2", "t-cp-3"]
    first = listing["members"][0]
    ip = trio.node("t-cp-1")["status"]["addresses"][0]["address"]
    assert isinstance(first["ID"], int) and first["ID"] == listing["header"]["member_id"]
    assert first["peerURLs"] == [f"https://{ip}:2380"]
    assert first["clientURLs"] == [f"https://{ip}:2379"]
    assert "isLearner" not in first  # omitted when false, as etcd's JSON does


def test_without_quorum_the_list_and_removals_fail(trio: Cluster) -> None:
    victim = trio.etcd.named("t-cp-3")
    assert victim is not None
    trio.stop_kubelet("t-cp-2")
    trio.stop_kubelet("t-cp-3")
    phase, message = run(trio, "t-cp-1", "member list -w json")
    assert (phase, message.split(" (")[0]) == ("Failed", "Error: context deadline exceeded")
    phase, message = run(trio, "t-cp-1", f"member remove {victim.id:x}")
    assert (phase, message) == ("Failed", "Error: etcdserver: unhealthy cluster")
    assert len(trio.etcd.members) == 3


def test_a_healthy_majority_removes_a_member_by_its_hex_id(trio: Cluster) -> None:
    victim = trio.etcd.named("t-cp-3")
    assert victim is not None
    trio.stop_kubelet("t-cp-3")
    phase, message = run(trio, "t-cp-1", f"member remove {victim.id:x}")
    assert phase == "Succeeded" and message.startswith(f"Member {victim.id:16x} removed")
    assert [m.name for m in trio.etcd.members] == ["t-cp-1", "t-cp-2"]


def test_an_external_etcd_cluster_has_no_stacked_etcd(world: World) -> None:
    ext = world.add_cluster(
        "ext",
        control_plane_endpoint="cp.ext.test:6443",
        nodes=[NodeSpec("x-cp-1", role="control-plane")],
        external_etcd=True,
    )
    config = yaml.safe_load(
        ext.configmap("kube-system", "kubeadm-config")["data"]["ClusterConfiguration"]
    )
    external = config["etcd"]["external"]
    assert external["endpoints"] and external["certFile"].endswith("apiserver-etcd-client.crt")
    assert ext.pod("kube-system", "etcd-x-cp-1") is None
    assert ext.pod("kube-system", "kube-apiserver-x-cp-1") is not None
    assert ext.etcd.members == []
    phase, message = run(ext, "x-cp-1", "member list -w json")
    assert phase == "Failed" and "no running etcd container" in message
