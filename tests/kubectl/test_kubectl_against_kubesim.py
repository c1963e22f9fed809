"""The real kubectl (v1.37, from the dev extra) against a simulated cluster: discovery, tables,
cordon, drain and budgets work, and what kubectl reports matches what joinops reads."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from joinops.clusters.kube import KubeCluster
from kubesim import Cluster, NodeSpec, World
from kubesim.kubectl_binary import kubectl_path
from workers.drain import is_cordoned

LABELS = {"app": "web"}


class Kubectl:
    def __init__(self, kubeconfig: Path, cache: Path) -> None:
        self.base = [
            str(kubectl_path()),
            "--kubeconfig",
            str(kubeconfig),
            "--cache-dir",
            str(cache),
        ]

    def __call__(self, *args: str) -> str:
        done = subprocess.run([*self.base, *args], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"kubectl {' '.join(args)}\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self(*args, "-o", "json"))


def rows(table: str) -> list[list[str]]:
    """kubectl's table output split into cells (columns are separated by 2+ spaces)."""
    import re

    return [re.split(r"\s{2,}", line.strip()) for line in table.strip().splitlines()]


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    with World(pod_grace_seconds=0.05, pdb_sync_seconds=0.01, pod_start_seconds=0.02) as world:
        yield world.add_cluster(
            "clusterA",
            nodes=[
                NodeSpec("a-cp-1", role="control-plane"),
                NodeSpec("a-w-1"),
                NodeSpec("a-w-2", kubelet_version="v1.30.9"),
            ],
        )
        assert world.internal_errors == []


@pytest.fixture
def kubectl(cluster: Cluster, tmp_path: Path) -> Kubectl:
    return Kubectl(cluster.write_kubeconfig(tmp_path / "kubeconfig"), tmp_path / "cache")


@pytest.fixture
def joinops_view(cluster: Cluster) -> KubeCluster:
    return KubeCluster("clusterA", cluster.api_client(), timeout_seconds=5)


def web(replicas: int) -> dict[str, Any]:
    return {
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": LABELS},
            "template": {
                "metadata": {"labels": LABELS},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    }


def test_get_nodes_shows_what_joinops_sees(kubectl: Kubectl, joinops_view: KubeCluster) -> None:
    table = rows(kubectl("get", "nodes"))
    assert table[0] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    by_name = {row[0]: row for row in table[1:]}
    assert sorted(by_name) == ["a-cp-1", "a-w-1", "a-w-2"]
    for name, row in by_name.items():
        facts = joinops_view.get_node(name)
        assert facts is not None
        assert row[1] == ("Ready" if facts.ready else "NotReady")
        assert (row[2] == "control-plane") is facts.is_control_plane
        assert row[4] == str(facts.kubelet_version)
    wide = rows(kubectl("get", "nodes", "-o", "wide"))
    assert wide[0][5:7] == ["INTERNAL-IP", "EXTERNAL-IP"]


def test_cordon_by_kubectl_is_what_joinops_reads(
    kubectl: Kubectl, joinops_view: KubeCluster
) -> None:
    assert kubectl("cordon", "a-w-1").strip() == "node/a-w-1 cordoned"
    assert is_cordoned(joinops_view, "a-w-1")
    facts = joinops_view.get_node("a-w-1")
    assert facts is not None and facts.unschedulable
    status = {row[0]: row[1] for row in rows(kubectl("get", "nodes"))[1:]}
    assert status["a-w-1"] == "Ready,SchedulingDisabled"
    assert kubectl("uncordon", "a-w-1").strip() == "node/a-w-1 uncordoned"
    assert not is_cordoned(joinops_view, "a-w-1")


def test_drain_ignoring_daemonsets_moves_deployment_pods_under_their_budget(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    raw = cluster.api_client()
    core, apps, policy = client.CoreV1Api(raw), client.AppsV1Api(raw), client.PolicyV1Api(raw)
    core.patch_node("a-w-2", {"spec": {"unschedulable": True}})
    apps.create_namespaced_deployment("default", web(2))
    cluster.add_pod("a-w-1", "agent", owner_kind="DaemonSet", labels={"app": "agent"})
    policy.create_namespaced_pod_disruption_budget(
        "default",
        {
            "metadata": {"name": "web"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": LABELS}},
        },
    )
    cluster.wait_for(
        lambda: (
            (
                policy.read_namespaced_pod_disruption_budget(
                    "web", "default"
                ).status.current_healthy
                or 0
            )
            == 2
        )
    )
    core.patch_node("a-w-2", {"spec": {"unschedulable": None}})
    out = kubectl("drain", "a-w-1", "--ignore-daemonsets", "--timeout=60s")
    assert "node/a-w-1 cordoned" in out and out.strip().endswith("node/a-w-1 drained")
    assert out.count("evicted") == 2
    left = core.list_pod_for_all_namespaces(field_selector="spec.nodeName=a-w-1").items
    assert [p.metadata.name for p in left] == ["agent"]  # the DaemonSet's pod stays
    moved = core.list_namespaced_pod("default", label_selector="app=web").items
    assert len(moved) == 2 and {p.spec.node_name for p in moved} == {"a-w-2"}


def test_get_pdb_matches_the_budget_status_joinops_reads(
    cluster: Cluster, kubectl: Kubectl
) -> None:
    raw = cluster.api_client()
    apps, policy = client.AppsV1Api(raw), client.PolicyV1Api(raw)
    apps.create_namespaced_deployment("default", web(3))
    policy.create_namespaced_pod_disruption_budget(
        "default",
        {
            "metadata": {"name": "web"},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": LABELS}},
        },
    )
    cluster.wait_for(
        lambda: (
            policy.read_namespaced_pod_disruption_budget("web", "default").status.current_healthy
            == 3
        )
    )
    status = policy.read_namespaced_pod_disruption_budget("web", "default").status
    table = rows(kubectl("get", "pdb"))
    assert table[0] == ["NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"]
    assert table[1][:4] == ["web", "N/A", "1", str(status.disruptions_allowed)]
    as_json = kubectl.json("get", "pdb", "web")
    assert as_json["status"]["currentHealthy"] == status.current_healthy == 3
    assert as_json["status"]["expectedPods"] == status.expected_pods == 3
    pods = rows(kubectl("get", "pods", "-l", "app=web"))
    assert [row[1:3] for row in pods[1:]] == [["1/1", "Running"]] * 3


def test_drain_refuses_a_bare_pod_unless_forced(cluster: Cluster, kubectl: Kubectl) -> None:
    cluster.add_pod("a-w-1", "debug")  # no controller
    done = subprocess.run(
        [*kubectl.base, "drain", "a-w-1", "--ignore-daemonsets", "--timeout=30s"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "cannot delete Pods that declare no controller" in done.stderr
    assert "default/debug" in done.stderr
    assert cluster.pod("default", "debug") is not None
    out = kubectl("drain", "a-w-1", "--ignore-daemonsets", "--force", "--timeout=30s")
    assert out.strip().endswith("node/a-w-1 drained")
    assert cluster.pod("default", "debug") is None
