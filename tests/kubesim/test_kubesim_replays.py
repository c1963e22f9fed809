"""Recorded real kube-apiserver exchanges (v1.36.2) replayed against kubesim: budget status
through an eviction and a replacement, graceful deletion ("Terminating"), and watches. Only what
a client reads is compared (fixtures/real-apiserver/README.md, "How a test should use them")."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client
from replay_support import (
    deletion_fields,
    pdb_arithmetic,
    recording,
    replay,
    send,
    status_fields,
)

from kubesim import Cluster, NodeSpec, World

NS = "rec"
PDB_PATH = f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/web-pdb"


@pytest.fixture
def rec() -> Iterator[Cluster]:
    # Long grace (as the recording's 30 s): a Terminating pod stays until a grace-0 DELETE ends
    # it, as the recording's kubelet did; budget syncs slow enough to read "right after".
    with World(pod_grace_seconds=60, pdb_sync_seconds=0.3, pod_start_seconds=0.01) as world:
        cluster = world.add_cluster("rec", nodes=[NodeSpec("rec-node-1"), NodeSpec("rec-node-2")])
        cluster.add_namespace(NS)
        yield cluster
        assert world.internal_errors == [] and cluster.internal_errors == []


def expected_body(name: str) -> Any:
    return recording(name)["response"]["body"]


def web_replicaset(cluster: Cluster) -> None:
    labels = {"app": "web"}
    body: Any = {
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    }
    client.AppsV1Api(cluster.api_client()).create_namespaced_replica_set(NS, body)


def pdb(cluster: Cluster) -> dict[str, Any]:
    body: dict[str, Any] = send(cluster, "GET", PDB_PATH).body
    return body


def web_pods(cluster: Cluster) -> list[dict[str, Any]]:
    listing: dict[str, Any] = send(
        cluster, "GET", f"/api/v1/namespaces/{NS}/pods", {"labelSelector": "app=web"}
    ).body
    return list(listing["items"])


def test_budget_status_through_an_eviction_and_its_replacement(rec: Cluster) -> None:
    web_replicaset(rec)
    recorded, created = replay(rec, "pdb-create-201")
    assert created.status == recorded["response"]["status"] == 201
    assert pdb_arithmetic(created.body) == pdb_arithmetic(recorded["response"]["body"])

    rec.wait_for(lambda: pdb(rec)["status"].get("currentHealthy") == 3)
    assert pdb_arithmetic(pdb(rec)) == pdb_arithmetic(
        expected_body("pdb-status-3-ready-minavailable-2")
    )

    for node in ("rec-node-1", "rec-node-2"):  # the recording had no scheduler: replacements wait
        send(
            rec,
            "PATCH",
            f"/api/v1/nodes/{node}",
            body={"spec": {"unschedulable": True}},
            content_type="application/merge-patch+json",
        )
    victim = web_pods(rec)[0]["metadata"]["name"]
    eviction = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": victim, "namespace": NS},
    }
    recorded, evicted = replay(
        rec,
        "eviction-201-allowed",
        path=f"/api/v1/namespaces/{NS}/pods/{victim}/eviction",
        body=eviction,
    )
    assert evicted.status == 201
    assert status_fields(evicted.body) == status_fields(recorded["response"]["body"])

    # What the eviction handler writes: one fewer allowed, the pod in disruptedPods. (The
    # recording's currentHealthy 2 came from a controller sync that raced in between; the
    # handler itself leaves currentHealthy alone, so it is not compared here.)
    right_after = pdb_arithmetic(pdb(rec))
    wanted = pdb_arithmetic(expected_body("pdb-status-right-after-eviction"))
    del right_after["currentHealthy"], wanted["currentHealthy"]
    assert right_after == {**wanted, "disrupted": [victim]}

    terminating = send(rec, "GET", f"/api/v1/namespaces/{NS}/pods/{victim}").body
    real_terminating = expected_body("pod-get-evicted-terminating")
    assert deletion_fields(terminating) == deletion_fields(real_terminating)
    assert [
        (c["type"], c["status"], c.get("reason"))
        for c in terminating["status"]["conditions"]
        if c["type"] == "DisruptionTarget"
    ] == [("DisruptionTarget", "True", "EvictionByEvictionAPI")]

    other = next(  # a Ready one: a Pending replacement would be evicted despite the budget
        p["metadata"]["name"]
        for p in web_pods(rec)
        if p["status"]["phase"] == "Running" and "deletionTimestamp" not in p["metadata"]
    )
    recorded, refused = replay(
        rec,
        "eviction-429-pdb",
        path=f"/api/v1/namespaces/{NS}/pods/{other}/eviction",
        body={**eviction, "metadata": {"name": other, "namespace": NS}},
    )
    assert refused.status == 429
    assert "retry-after" not in refused.headers  # an exhausted budget sends no Retry-After
    mine, theirs = status_fields(refused.body), status_fields(recorded["response"]["body"])
    assert mine == theirs

    rec.wait_for(lambda: not pdb(rec)["status"].get("disruptedPods"))
    assert pdb_arithmetic(pdb(rec)) == pdb_arithmetic(
        expected_body("pdb-status-controller-after-eviction")
    )  # expectedPods 4: an integer minAvailable counts the Terminating pod too

    pods = web_pods(rec)
    real_pods = expected_body("replicaset-pods-list-during-replacement")["items"]
    assert sorted(deletion_fields(p)[0] for p in pods) == sorted(
        deletion_fields(p)[0] for p in real_pods
    )  # three live, one Terminating
    (replacement,) = [
        p
        for p in pods
        if "deletionTimestamp" not in p["metadata"] and not p["spec"].get("nodeName")
    ]
    real = expected_body("replicaset-replacement-pod")
    for pod in (replacement, real):
        ref = pod["metadata"]["ownerReferences"][0]
        assert (ref["kind"], ref["controller"], ref["blockOwnerDeletion"]) == (
            "ReplicaSet",
            True,
            True,
        )
        assert pod["metadata"]["generateName"] == "web-"
        assert pod["status"]["phase"] == "Pending"

    uid = terminating["metadata"]["uid"]
    recorded, final = replay(
        rec,
        "pod-delete-final-grace0",
        path=f"/api/v1/namespaces/{NS}/pods/{victim}",
        body={
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "gracePeriodSeconds": 0,
            "preconditions": {"uid": uid},
        },
    )
    assert final.status == 200 and final.body["kind"] == "Pod"
    send(
        rec,
        "PATCH",
        "/api/v1/nodes/rec-node-2",
        body={"spec": {"unschedulable": None}},
        content_type="application/merge-patch+json",
    )
    rec.wait_for(
        lambda: (
            pdb(rec)["status"].get("currentHealthy") == 3
            and pdb(rec)["status"].get("expectedPods") == 3
        )
    )
    assert pdb_arithmetic(pdb(rec)) == pdb_arithmetic(expected_body("pdb-status-recovered"))


def bound_pod(cluster: Cluster, name: str, labels: dict[str, str] | None = None) -> None:
    body: Any = {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"nodeName": "rec-node-1", "containers": [{"name": "c", "image": "busybox:1.36"}]},
    }
    client.CoreV1Api(cluster.api_client()).create_namespaced_pod(NS, body)


def test_graceful_deletion_terminating_and_its_end(rec: Cluster) -> None:
    bound_pod(rec, "graceful-1")
    path = f"/api/v1/namespaces/{NS}/pods/graceful-1"
    rec.wait_for(lambda: send(rec, "GET", path).body["status"]["phase"] == "Running")

    recorded, first = replay(rec, "pod-delete-graceful-200", path=path)
    assert first.status == 200 and first.body["kind"] == "Pod"
    assert (
        deletion_fields(first.body) == deletion_fields(recorded["response"]["body"]) == (True, 30)
    )

    read = send(rec, "GET", path).body
    real = expected_body("pod-get-terminating")
    assert deletion_fields(read) == deletion_fields(real)
    assert read["status"]["phase"] == real["status"]["phase"] == "Running"

    recorded, again = replay(rec, "pod-delete-again-while-terminating", path=path)
    assert again.status == 200
    assert again.body["metadata"]["resourceVersion"] == read["metadata"]["resourceVersion"]
    assert deletion_fields(again.body) == deletion_fields(recorded["response"]["body"])

    recorded, final = replay(
        rec,
        "pod-delete-final-grace0",
        path=path,
        body={
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "gracePeriodSeconds": 0,
            "preconditions": {"uid": read["metadata"]["uid"]},
        },
    )
    assert final.status == 200
    assert deletion_fields(final.body) == deletion_fields(recorded["response"]["body"]) == (True, 0)

    recorded, gone = replay(rec, "pod-get-404-after-delete", path=path)
    assert gone.status == 404
    assert status_fields(gone.body) == status_fields(recorded["response"]["body"])


def test_unbound_pod_goes_at_once_then_404(rec: Cluster) -> None:
    body: Any = {
        "metadata": {"name": "unbound-1"},
        "spec": {"schedulerName": "none", "containers": [{"name": "c", "image": "busybox:1.36"}]},
    }
    client.CoreV1Api(rec.api_client()).create_namespaced_pod(NS, body)
    recorded, deleted = replay(rec, "pod-delete-unbound-immediate")
    assert deleted.status == 200 and deleted.body["kind"] == "Pod"
    assert deletion_fields(deleted.body) == deletion_fields(recorded["response"]["body"])
    recorded, missing = replay(rec, "pod-delete-404")
    assert missing.status == 404
    assert status_fields(missing.body) == status_fields(recorded["response"]["body"])


def test_watch_sees_a_pods_life_in_the_recorded_order(rec: Cluster) -> None:
    start_rv = send(rec, "GET", f"/api/v1/namespaces/{NS}/pods").body["metadata"]["resourceVersion"]
    events: list[Any] = []
    query = {
        "resourceVersion": start_rv,
        "allowWatchBookmarks": "true",
        "timeoutSeconds": "3",
        "labelSelector": "app=watched",
        "watch": "true",
    }
    reader = threading.Thread(
        target=lambda: events.extend(send(rec, "GET", f"/api/v1/namespaces/{NS}/pods", query).body)
    )
    reader.start()
    path = f"/api/v1/namespaces/{NS}/pods/watched-1"
    bound_pod(rec, "watched-1", {"app": "watched"})
    rec.wait_for(lambda: send(rec, "GET", path).body["status"]["phase"] == "Running")
    uid = send(rec, "DELETE", path).body["metadata"]["uid"]
    send(rec, "DELETE", path, body={"gracePeriodSeconds": 0, "preconditions": {"uid": uid}})
    reader.join(10)

    def lifecycle(evts: list[Any]) -> list[tuple[str, Any, bool, Any]]:
        return [
            (e["type"], e["object"]["status"].get("phase"), *deletion_fields(e["object"]))
            for e in evts
            if e["type"] != "BOOKMARK"
        ]

    real = lifecycle(expected_body("watch-pod-lifecycle-events"))
    assert [e[0] for e in lifecycle(events)] == [e[0] for e in real]
    assert [e[2:] for e in lifecycle(events)] == [e[2:] for e in real]


def test_watch_from_too_old_and_future_resource_versions(rec: Cluster) -> None:
    recorded, old = replay(
        rec,
        "watch-410-too-old-resourceversion",
        query={
            **recording("watch-410-too-old-resourceversion")["request"]["query"],
            "resourceVersion": "100",
            "timeoutSeconds": "1",
        },
    )
    assert old.status == recorded["response"]["status"] == 200
    real_events = recorded["response"]["body"]
    assert [e["type"] for e in old.body] == [e["type"] for e in real_events] == ["ERROR"]
    mine, theirs = old.body[0]["object"], real_events[0]["object"]
    assert (mine["code"], mine["reason"]) == (theirs["code"], theirs["reason"]) == (410, "Expired")
    assert mine["message"].startswith("too old resource version: 100 (")

    future = str(int(send(rec, "GET", "/api/v1/nodes").body["metadata"]["resourceVersion"]) + 10**6)
    recorded, silent = replay(
        rec,
        "watch-future-resourceversion",
        query={
            **recording("watch-future-resourceversion")["request"]["query"],
            "resourceVersion": future,
            "timeoutSeconds": "1",
        },
    )
    assert silent.status == 200
    assert (
        [e["type"] for e in silent.body if e["type"] != "BOOKMARK"]
        == [e["type"] for e in recorded["response"]["body"] if e["type"] != "BOOKMARK"]
        == []
    )


def test_binding_a_pod_as_a_scheduler_does(rec: Cluster) -> None:
    body: Any = {
        "metadata": {"name": "web-9w6wh"},
        "spec": {"schedulerName": "none", "containers": [{"name": "c", "image": "busybox:1.36"}]},
    }
    client.CoreV1Api(rec.api_client()).create_namespaced_pod(NS, body)
    recorded, bound = replay(rec, "pod-binding-201")
    assert bound.status == 201
    assert status_fields(bound.body) == status_fields(recorded["response"]["body"])
    recorded, read = replay(rec, "pod-get-after-binding")
    real = recorded["response"]["body"]
    assert read.body["spec"]["nodeName"] == real["spec"]["nodeName"] == "rec-node-1"
    scheduled = [
        (c["type"], c["status"])
        for c in read.body["status"]["conditions"]
        if c["type"] == "PodScheduled"
    ]
    assert scheduled == [("PodScheduled", "True")]
    again = send(
        rec,
        "POST",
        recorded["request"]["path"] + "/binding",
        body=recording("pod-binding-201")["request"]["body"],
    )
    assert (again.status, again.body["reason"]) == (409, "Conflict")
