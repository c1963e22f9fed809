"""Every kubeconfig file in `arrivals.directory` is a cluster, for the bot and the workers alike,
picked up as the directory changes, with no restart."""

from __future__ import annotations

import os

import pytest

from joinops.clusters.registry import ClusterRegistry
from joinops.errors import ConfigError, UsageError
from joinops.requests.lifecycle import State
from tests.arrivals.support import arrivals_config, drop_host
from tests.support.clusters import settings_for
from tests.support.engine import approved_request
from workers.runner import run_request


@pytest.fixture
def hosts(tmp_path):  # type: ignore[no-untyped-def]
    return tmp_path / "hosts.d"


@pytest.fixture
def registry(world, tmp_path, hosts) -> ClusterRegistry:  # type: ignore[no-untyped-def]
    return ClusterRegistry(settings_for(world, tmp_path, **arrivals_config(world, tmp_path, hosts)))


def test_a_file_dropped_in_is_a_cluster_until_it_is_removed(world, registry, hosts):
    assert registry.names == ["clusterA", "clusterB"]  # the directory is not there yet: no hosts
    path = drop_host(world, hosts, "host-1")
    assert registry.names == ["clusterA", "clusterB", "host-1"]
    assert str(registry.get("host-1").version()) == "v1.32.0"
    path.unlink()
    assert registry.names == ["clusterA", "clusterB"]
    with pytest.raises(UsageError, match="unknown cluster 'host-1'"):
        registry.get("host-1")


def test_a_file_named_like_no_cluster_is_named_after_its_single_context(world, registry, hosts):
    drop_host(world, hosts, "host-1", file="admin conf (1).yaml")
    assert registry.names == ["clusterA", "clusterB", "host-1"]


def test_hidden_files_and_directories_are_not_hosts(world, registry, hosts):
    drop_host(world, hosts, "host-1", file=".host-1.yaml")
    (hosts / "..data").mkdir()
    assert registry.names == ["clusterA", "clusterB"]


def test_a_projected_secret_swapping_its_symlink_is_followed(world, registry, hosts, tmp_path):
    """Kubernetes updates a projected Secret by pointing `..data` at a new directory."""
    hosts.mkdir()
    first = hosts / "..2026_01"
    first.mkdir()
    world.write_kubeconfig(first / "edge.yaml", only=["host-1"])
    (hosts / "..data").symlink_to(first.name)
    (hosts / "edge.yaml").symlink_to("..data/edge.yaml")
    assert str(registry.get("edge").version()) == "v1.32.0"
    second = hosts / "..2026_02"
    second.mkdir()
    world.write_kubeconfig(second / "edge.yaml", only=["clusterA"])
    (hosts / "..data_tmp").symlink_to(second.name)
    os.replace(hosts / "..data_tmp", hosts / "..data")
    assert str(registry.get("edge").version()) == "v1.31.4"  # the new content, a new client


def test_two_files_naming_one_cluster_are_both_refused_until_one_goes(world, registry, hosts):
    drop_host(world, hosts, "host-1", file="host-1.yaml")
    second = drop_host(world, hosts, "host-1", file="host-1.conf")
    assert "host-1" not in registry.names
    with pytest.raises(ConfigError) as refused:
        registry.get("host-1")
    assert "host-1.conf" in str(refused.value) and "host-1.yaml" in str(refused.value)
    assert "until only one is left" in str(refused.value)
    second.unlink()
    assert str(registry.get("host-1").version()) == "v1.32.0"


def test_a_file_naming_a_configured_cluster_is_refused(world, registry, hosts):
    drop_host(world, hosts, "host-1", file="clusterB.yaml")
    assert registry.names == ["clusterA", "clusterB"]
    assert str(registry.get("clusterB").version()) == "v1.32.2"  # the configured one


def test_an_invalid_file_is_refused_by_name_without_showing_its_content(world, registry, hosts):
    hosts.mkdir()
    (hosts / "host-9.yaml").write_text("users:\n- name: x\n  user: {token: s3cr3t-t0ken\n")
    (hosts / "host-8.yaml").write_text("apiVersion: v1\nkind: Config\ncontexts: []\n")
    assert registry.names == ["clusterA", "clusterB"]
    with pytest.raises(ConfigError) as refused:
        registry.get("host-9")
    message = str(refused.value)
    assert f"{hosts}/host-9.yaml" in message and "not valid YAML (line" in message
    assert "s3cr3t" not in message
    with pytest.raises(ConfigError) as no_contexts:
        registry.get("host-8")
    assert "host-8.yaml: it is not a kubeconfig: it has no contexts" in str(no_contexts.value)


def test_a_worker_moves_a_node_of_a_host_dropped_in_after_it_started(
    world, make_ctx, tmp_path, hosts
):
    ctx = make_ctx(**arrivals_config(world, tmp_path, hosts))
    drop_host(world, hosts, "host-1")  # after the engine's context was built
    request = approved_request(ctx, "node-1", "host-1", "clusterB")
    assert run_request(ctx, request.id) is State.SUCCEEDED
    assert world.cluster("clusterB").node("node-1") is not None
