"""Two refusals made when the request is made rather than at the point of no return: the source's
agent namespace must let Pod Security admit the privileged node agent, and the target must have a
pod range left for the node (kube-controller-manager's range allocator; kubesim models both:
kubesim/pod_security.py and kubesim/node_ipam.py name the real sources)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kubernetes import client

from joinops.errors import ClusterForbidden
from joinops.requests.asks import MigrationAsk
from joinops.requests.model import Role
from joinops.rules import batch as batches
from joinops.rules.check import Verdict, check
from kubesim import NodeSpec, World
from tests.support.clusters import registry_for

ENFORCE = "pod-security.kubernetes.io/enforce"


def refusals(verdict: Verdict) -> dict[str, str]:
    return {f.code: f.text for f in verdict.findings if f.severity.name == "REFUSAL"}


def move(world: World, tmp_path: Path, agent_namespace: str = "joinops-system") -> Verdict:
    registry = registry_for(world, tmp_path)
    ask = MigrationAsk("a-w-1", "clusterA", "clusterB", Role.WORKER)
    source, target = registry.get("clusterA"), registry.get("clusterB")
    return check(ask, source, target, agent_namespace=agent_namespace)


def label_namespace(world: World, cluster: str, name: str, labels: dict[str, str]) -> None:
    core = client.CoreV1Api(world.cluster(cluster).api_client())
    core.create_namespace({"metadata": {"name": name, "labels": labels}})


# --- the agent namespace ---


@pytest.mark.parametrize("level", ["restricted", "baseline"])
def test_an_agent_namespace_enforcing_less_than_privileged_is_refused(
    world: World, tmp_path: Path, level: str
) -> None:
    label_namespace(world, "clusterA", "joinops-system", {ENFORCE: level})
    text = refusals(move(world, tmp_path))["agent-pod-security"]
    assert "clusterA's namespace `joinops-system`" in text
    assert f"`pod-security.kubernetes.io/enforce: {level}`" in text
    assert (
        "`kubectl label namespace joinops-system pod-security.kubernetes.io/enforce=privileged "
        "--overwrite`" in text
    )
    assert "choose another `agent.namespace`" in text


def test_a_missing_privileged_or_unlabelled_agent_namespace_is_fine(
    world: World, tmp_path: Path
) -> None:
    assert move(world, tmp_path).allowed  # missing: joinops creates it privileged
    label_namespace(world, "clusterA", "joinops-system", {})  # the cluster's default
    assert move(world, tmp_path).allowed
    label_namespace(world, "clusterA", "agents", {ENFORCE: "privileged"})
    assert move(world, tmp_path, agent_namespace="agents").allowed


def test_the_configured_agent_namespace_is_the_one_read(world: World, tmp_path: Path) -> None:
    label_namespace(world, "clusterA", "ops-agents", {ENFORCE: "baseline"})
    assert move(world, tmp_path).allowed  # joinops-system is not ops-agents
    text = refusals(move(world, tmp_path, agent_namespace="ops-agents"))["agent-pod-security"]
    assert "kubectl label namespace ops-agents" in text


def test_a_batch_reads_the_agent_namespace_once_per_source(world: World, tmp_path: Path) -> None:
    label_namespace(world, "clusterA", "joinops-system", {ENFORCE: "restricted"})
    source = world.cluster("clusterA")
    source.reset_requests()
    plan = batches.plan_nodes(
        ["a-w-1", "a-w-old"], "clusterA", "clusterC", Role.WORKER, registry_for(world, tmp_path)
    )
    assert all("agent-pod-security" in refusals(i.verdict) for i in plan.items)
    assert len(source.requests_for("get", "namespaces")) == 1


def test_a_pod_security_403_is_not_reported_as_missing_credentials(
    world: World, tmp_path: Path
) -> None:
    """The agent step's 403, read as the worker reads it (joinops.clusters.kube)."""
    label_namespace(world, "clusterA", "joinops-system", {ENFORCE: "baseline"})
    source = registry_for(world, tmp_path).get("clusterA")
    pod = {
        "metadata": {"name": "joinops-agent-x"},
        "spec": {
            "hostPID": True,
            "containers": [{"name": "agent", "image": "busybox"}],
        },
    }
    with pytest.raises(ClusterForbidden) as refused:
        source.call(
            "create",
            "pods/joinops-agent-x",
            source.core.create_namespaced_pod,
            "joinops-system",
            pod,
        )
    assert "Pod Security admission refused to create pods/joinops-agent-x" in refused.value.detail
    assert 'violates PodSecurity "baseline:latest": host namespaces (hostPID=true)' in (
        refused.value.detail
    )
    assert "pod-security.kubernetes.io/enforce=privileged" in refused.value.detail
    assert "may not" not in refused.value.detail


# --- pod ranges in the target ---


def two_clusters(world: World, target_subnet: str, target_nodes: int, mask: int = 24) -> None:
    world.add_cluster(
        "clusterA",
        nodes=[NodeSpec("a-cp-1", role="control-plane")]
        + [NodeSpec(f"a-w-{i}") for i in range(1, 4)],
    )
    world.add_cluster(
        "clusterB",
        nodes=[NodeSpec("b-cp-1", role="control-plane")]
        + [NodeSpec(f"b-w-{i}") for i in range(1, target_nodes)],
        pod_subnet=target_subnet,
        node_cidr_mask_size=mask,
    )


def test_a_target_without_a_free_pod_range_is_refused(tmp_path: Path) -> None:
    with World() as world:
        two_clusters(world, "10.244.0.0/23", target_nodes=2)  # two /24s, both given out
        text = refusals(move(world, tmp_path))["pod-range-exhausted"]
    assert "clusterB has no pod range left for `a-w-1`" in text
    assert "podSubnet 10.244.0.0/23, a /24 per node: 2 of 2 ranges in use" in text
    assert "CIDRNotAvailable" in text
    assert "Remove nodes from clusterB first" in text


def test_the_mask_comes_from_the_kubeadm_configuration(tmp_path: Path) -> None:
    with World() as world:
        two_clusters(world, "10.244.0.0/24", target_nodes=2, mask=25)  # two /25s
        text = refusals(move(world, tmp_path))["pod-range-exhausted"]
    assert "podSubnet 10.244.0.0/24, a /25 per node: 2 of 2 ranges in use" in text


def test_a_target_with_a_free_range_allows_the_move(tmp_path: Path) -> None:
    with World() as world:
        two_clusters(world, "10.244.0.0/22", target_nodes=2)  # four /24s, two given out
        assert move(world, tmp_path).allowed


@pytest.mark.parametrize("subnet", ["10.244.0.0/16,fd00::/56", "fd00::/56", ""])
def test_dual_stack_ipv6_or_no_pod_subnet_do_not_get_in_the_way(
    tmp_path: Path, subnet: str
) -> None:
    with World() as world:
        two_clusters(world, subnet, target_nodes=2)
        assert move(world, tmp_path).allowed


def test_a_batch_beyond_the_free_ranges_refuses_the_nodes_that_do_not_fit(
    tmp_path: Path,
) -> None:
    with World() as world:
        two_clusters(world, "10.244.0.0/22", target_nodes=2)  # two of four ranges free
        plan = batches.plan_nodes(
            ["a-w-1", "a-w-2", "a-w-3"],
            "clusterA",
            "clusterB",
            Role.WORKER,
            registry_for(world, tmp_path),
        )
    refused = {i.ask.node: refusals(i.verdict) for i in plan.items}
    assert not plan.allowed
    assert [n for n, r in refused.items() if r] == ["a-w-3"]
    text = refused["a-w-3"]["pod-range-exhausted"]
    assert "clusterB has pod ranges left for only 2 of this batch's 3 nodes" in text
    assert "2 of 4 ranges in use" in text
    assert "remove nodes from clusterB first" in text
