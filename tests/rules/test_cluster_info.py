"""A target the node could not find or trust through kube-public/cluster-info is refused before
anything changes, naming the ConfigMap."""

from __future__ import annotations

from kubernetes import client

from joinops.requests.asks import MigrationAsk
from joinops.requests.model import Role
from joinops.rules.check import check
from tests.support.clusters import registry_for


def verdict_for(world, tmp_path):  # type: ignore[no-untyped-def]
    registry = registry_for(world, tmp_path)
    ask = MigrationAsk("a-w-1", "clusterA", "clusterB", Role.WORKER)
    return check(ask, registry.get("clusterA"), registry.get("clusterB"))


def refusals(verdict) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {f.code: f.text for f in verdict.findings if f.severity.name == "REFUSAL"}


def test_a_target_without_cluster_info_is_refused_naming_the_configmap(world, tmp_path):
    core = client.CoreV1Api(world.cluster("clusterB").api_client())
    core.delete_namespaced_config_map("cluster-info", "kube-public")
    found = refusals(verdict_for(world, tmp_path))
    assert list(found) == ["cluster-info"]
    assert "clusterB has no ConfigMap kube-public/cluster-info" in found["cluster-info"]
    assert "Nothing was changed." in found["cluster-info"]


def test_a_cluster_info_without_a_kubeconfig_is_refused(world, tmp_path):
    core = client.CoreV1Api(world.cluster("clusterB").api_client())
    core.patch_namespaced_config_map(
        "cluster-info", "kube-public", [{"op": "remove", "path": "/data/kubeconfig"}]
    )
    found = refusals(verdict_for(world, tmp_path))
    assert (
        "clusterB's ConfigMap kube-public/cluster-info is unusable: no `kubeconfig` key"
        in (found["cluster-info"])
    )
