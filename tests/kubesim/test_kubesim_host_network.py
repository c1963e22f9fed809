"""Simulated hosts' pod network: what the bridge CNI plugin does with `cni0` (the model behind
the moved flannel node of tests/engine/test_host_probe.py).

Real behaviour modelled: containernetworking/plugins `plugins/main/bridge/bridge.go`
(`ensureAddr`) refuses a sandbox when the bridge already holds an address other than the
gateway of the node's range: `"cni0" already has an IP address different from <gw>/<len>`;
the kubelet reports it as a `FailedCreatePodSandBox` event and the pod stays Pending
(flannel-io/flannel#1850 is a node moved between clusters).
"""

from __future__ import annotations

from kubernetes import client

from kubesim import NodeSpec, World


def test_the_bridge_takes_the_nodes_range_and_refuses_pods_once_the_range_changed() -> None:
    with World() as world:
        cluster = world.add_cluster("c", nodes=[NodeSpec("n-1")])
        host = world.host("n-1")
        host.bridge_cni = True
        cidr = cluster.node("n-1")["spec"]["podCIDR"]
        spec = {"containers": [{"name": "c", "image": "x"}]}
        cluster.add_pod("n-1", "first", phase="Pending", spec=spec)
        first = cluster.wait_for(lambda: _running(cluster, "first"))
        gateway = host.interfaces["cni0"]
        assert gateway.split("/")[0].rsplit(".", 1)[0] == cidr.split("/")[0].rsplit(".", 1)[0]
        assert first["status"]["podIP"].startswith(cidr.rsplit(".", 1)[0] + ".")

        host.interfaces["cni0"] = "10.99.7.1/24"  # what a node from another cluster brings
        cluster.add_pod("n-1", "second", phase="Pending", spec=spec)
        api = client.CoreV1Api(cluster.api_client())
        try:
            events = cluster.wait_for(
                lambda: (
                    api.list_namespaced_event(
                        "default", field_selector="involvedObject.name=second"
                    ).items
                )
            )
        finally:
            api.api_client.close()
        assert events[0].reason == "FailedCreatePodSandBox"
        assert f'"cni0" already has an IP address different from {gateway}' in events[0].message
        assert cluster.pod("default", "second")["status"]["phase"] == "Pending"


def _running(cluster, name: str):  # type: ignore[no-untyped-def]
    pod = cluster.pod("default", name) or {}
    return pod if pod.get("status", {}).get("phase") == "Running" else None
