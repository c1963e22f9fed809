"""Clusters that share one kubeconfig file, one context each, as operators often configure them:
each cluster's client talks to its own API server with its own credentials, relative file
paths in the kubeconfig resolve against the file's directory (as kubectl does), and a context
the file does not have is refused naming the cluster and the context."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from joinops.clusters.registry import ClusterRegistry
from joinops.errors import ConfigError
from joinops.settings import FileConfig, Secrets, build_settings
from kubesim import World


def _registry(clusters: dict[str, dict[str, str]]) -> ClusterRegistry:
    raw = {"clusters": clusters, "approvers": ["UAPPROVER1"]}
    return ClusterRegistry(build_settings(FileConfig.model_validate(raw), Secrets()))


def _node_names(registry: ClusterRegistry, name: str) -> list[str]:
    cluster = registry.get(name)
    nodes = cluster.call("list", "nodes", cluster.core.list_node)
    return sorted(n.metadata.name for n in nodes.items)


def test_clusters_sharing_one_kubeconfig_each_reach_their_own_api_server(world: World, tmp_path):
    kubeconfig = world.write_kubeconfig(tmp_path / "fleet.kubeconfig")
    registry = _registry(
        {name: {"kubeconfig": str(kubeconfig), "context": name} for name in world.clusters}
    )
    for name in world.clusters:
        assert _node_names(registry, name) == sorted(world.cluster(name).node_names())
        assert registry.get(name).server == world.cluster(name).client_server


def test_a_relative_certificate_path_resolves_against_the_kubeconfig_directory(
    world: World, tmp_path, monkeypatch
):
    directory = tmp_path / "conf"
    directory.mkdir()
    (directory / "pki").mkdir()
    document = world.kubeconfig_dict(only=["clusterB"])
    cluster = document["clusters"][0]["cluster"]
    cluster.pop("certificate-authority-data")
    cluster["certificate-authority"] = "pki/ca.crt"
    (directory / "pki" / "ca.crt").write_bytes(world.cluster("clusterB").client_ca_pem)
    kubeconfig = directory / "clusterB.kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(document))
    monkeypatch.chdir(tmp_path)  # not the kubeconfig's directory
    registry = _registry({"clusterB": {"kubeconfig": str(kubeconfig)}})
    assert _node_names(registry, "clusterB") == sorted(world.cluster("clusterB").node_names())


def test_a_context_the_file_does_not_have_is_refused_by_name(world: World, tmp_path: Path):
    kubeconfig = world.write_kubeconfig(tmp_path / "fleet.kubeconfig")
    registry = _registry({"clusterZ": {"kubeconfig": str(kubeconfig), "context": "clusterZ"}})
    with pytest.raises(ConfigError) as refused:
        registry.get("clusterZ")
    assert "clusters.clusterZ: cannot use kubeconfig" in str(refused.value)
    assert "context 'clusterZ'" in str(refused.value)
