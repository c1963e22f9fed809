"""The eviction exchanges recorded from a real kube-apiserver, replayed against kubesim.

Each test builds the state the recording describes (same namespaces, pods and budgets), sends the
recorded request through the official client, and compares what a client reads: the status code,
the `Retry-After` header, and the whole `Status` body (these bodies carry no ids or timestamps).
Recordings: tests/kubesim/fixtures/real-apiserver/, copied from the real-apiserver recordings
(see its README).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ksim_support import Apis
from kubernetes import client

from kubesim import Cluster
from kubesim.resources import NAMESPACES

RECORDINGS = Path(__file__).resolve().parent / "fixtures/real-apiserver"


def recording(name: str) -> dict[str, Any]:
    path = RECORDINGS / f"{name}.json"
    assert path.is_file(), f"the real-apiserver recordings are missing: {path}"
    result: dict[str, Any] = json.loads(path.read_text())
    return result


def replay(apis: Apis, name: str) -> tuple[int, dict[str, Any], dict[str, str]]:
    """Send the recorded eviction; the answer's status, body and headers (lower-case names)."""
    sent = recording(name)["request"]
    _, _, namespace, _, pod, _ = sent["path"].strip("/").split("/")[1:]
    try:
        answer = apis.core.create_namespaced_pod_eviction(
            pod, namespace, sent["body"], _preload_content=False
        )
    except client.ApiException as e:
        headers = {k.lower(): v for k, v in (e.headers or {}).items()}
        return int(e.status), json.loads(e.body), headers
    headers = {k.lower(): v for k, v in answer.headers.items()}
    return int(answer.status), json.loads(answer.data), headers


def assert_matches(apis: Apis, name: str) -> None:
    status, body, headers = replay(apis, name)
    expected = recording(name)["response"]
    assert status == expected["status"]
    assert body == expected["body"]
    assert headers.get("retry-after") == expected["headers"].get("retry-after")


@pytest.fixture
def rec(cluster_a: Cluster) -> Cluster:
    cluster_a.add_namespace("rec")
    return cluster_a


def web_replicas(cluster: Cluster, names: list[str]) -> None:
    for name in names:
        cluster.add_pod("a-w-1", name, "rec", {"app": "web"}, owner_kind="ReplicaSet")


def test_allowed_eviction_then_refused_by_the_budget(apis: Apis, rec: Cluster) -> None:
    rec.world.pod_grace_seconds = 5.0  # the evicted pod stays Terminating, as on the recording
    web_replicas(rec, ["web-ktd97", "web-ppcfs", "web-x2b4m"])
    rec.add_pdb("web-pdb", "rec", {"app": "web"}, min_available=2)
    rec.wait_for(lambda: rec.pdb("rec", "web-pdb")["status"]["disruptionsAllowed"] == 1)
    assert_matches(apis, "eviction-201-allowed")
    rec.wait_for(lambda: rec.pdb("rec", "web-pdb")["status"]["currentHealthy"] == 2)
    assert_matches(apis, "eviction-429-pdb")


def test_two_budgets_answer_500(apis: Apis, rec: Cluster) -> None:
    rec.add_pod("a-w-1", "multi-1", "rec", {"app": "multi"})
    rec.add_pdb("multi-a", "rec", {"app": "multi"}, min_available=0)
    rec.add_pdb("multi-b", "rec", {"app": "multi"}, min_available=0)
    assert_matches(apis, "eviction-500-two-pdbs")


def test_missing_pod_answers_404(apis: Apis, rec: Cluster) -> None:
    assert_matches(apis, "eviction-404-no-pod")


def test_bare_pod_under_max_unavailable_is_refused(apis: Apis, rec: Cluster) -> None:
    rec.add_pod("a-w-1", "fresh-1", "rec", {"app": "fresh"})
    rec.add_pdb("fresh-pdb", "rec", {"app": "fresh"}, max_unavailable=1)
    rec.wait_for(lambda: rec.pdb("rec", "fresh-pdb")["status"].get("observedGeneration"))
    assert_matches(apis, "eviction-429-pdb-bare-pod-maxunavailable")


def test_budget_still_being_processed_says_retry_after_10(apis: Apis, rec: Cluster) -> None:
    rec.world.pdb_sync_seconds = 600.0  # the recording's controller-manager was stopped
    rec.add_pod("a-w-1", "slow-1", "rec", {"app": "slow"})
    rec.add_pdb("slow-pdb", "rec", {"app": "slow"}, min_available=1, synced=False)
    assert_matches(apis, "eviction-429-pdb-still-processing")


def test_pending_pod_ignores_the_budget(apis: Apis, rec: Cluster) -> None:
    rec.stop_kubelet("a-w-1")
    rec.add_pod("a-w-1", "fresh-pending", "rec", {"app": "fresh"}, phase="Pending")
    rec.add_pdb("fresh-pdb", "rec", {"app": "fresh"}, max_unavailable=1)
    rec.wait_for(lambda: rec.pdb("rec", "fresh-pdb")["status"].get("observedGeneration"))
    assert_matches(apis, "eviction-201-pending-pod-ignores-pdb")


def test_terminating_namespace_answers_403_namespace_terminating(
    apis: Apis, cluster_a: Cluster
) -> None:
    cluster_a.add_pod("a-w-1", "held-1", "doomed", owner_kind="ReplicaSet")
    with cluster_a.lock:  # being deleted, its pod held (the recording's pod had a finalizer)
        cluster_a.store.mutate(
            NAMESPACES, "", "doomed", lambda o: o["status"].update(phase="Terminating")
        )
    assert_matches(apis, "eviction-403-namespace-terminating")
