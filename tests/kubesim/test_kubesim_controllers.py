"""Controllers through the official client: Deployments, ReplicaSets, StatefulSets, Jobs, the
scheduler, volumes and the disruption controller replacing and placing pods as a cluster does."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from kubesim import Cluster

CONTAINERS = [{"name": "c", "image": "nginx:1.27"}]


def template(labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {"metadata": {"labels": labels}, "spec": {"containers": CONTAINERS, **spec}}


def deployment(name: str, replicas: int, **spec: Any) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": template(labels, **spec),
        },
    }


def ready_pods(cluster: Cluster, app: str) -> list[dict[str, Any]]:
    return [
        p
        for p in cluster.pods("default")
        if (p["metadata"].get("labels") or {}).get("app") == app
        and not p["metadata"].get("deletionTimestamp")
        and any(
            c["type"] == "Ready" and c["status"] == "True"
            for c in p["status"].get("conditions") or []
        )
    ]


def test_deployment_owns_a_replicaset_that_owns_running_pods(cluster_a: Cluster) -> None:
    raw = cluster_a.api_client()
    apps, core = client.AppsV1Api(raw), client.CoreV1Api(raw)
    apps.create_namespaced_deployment("default", deployment("web", 3))
    cluster_a.wait_for(lambda: len(ready_pods(cluster_a, "web")) == 3)
    (rs,) = apps.list_namespaced_replica_set("default").items
    assert rs.metadata.owner_references[0].kind == "Deployment"
    assert rs.metadata.owner_references[0].controller is True
    pods = core.list_namespaced_pod("default", label_selector="app=web").items
    assert {p.metadata.owner_references[0].name for p in pods} == {rs.metadata.name}
    assert all(p.metadata.name.startswith(rs.metadata.name + "-") for p in pods)
    assert all(p.metadata.labels["pod-template-hash"] for p in pods)
    assert {p.spec.node_name for p in pods} <= {"a-w-1", "a-w-2"}  # not the control plane
    cluster_a.wait_for(
        lambda: apps.read_namespaced_deployment("web", "default").status.available_replicas == 3
    )


def test_evicted_pod_is_replaced_on_a_schedulable_node(cluster_a: Cluster) -> None:
    raw = cluster_a.api_client()
    apps, core = client.AppsV1Api(raw), client.CoreV1Api(raw)
    apps.create_namespaced_deployment("default", deployment("web", 2))
    cluster_a.wait_for(lambda: len(ready_pods(cluster_a, "web")) == 2)
    core.patch_node("a-w-1", {"spec": {"unschedulable": True}})
    before = {p["metadata"]["uid"] for p in ready_pods(cluster_a, "web")}
    victim = next(p for p in ready_pods(cluster_a, "web"))
    core.create_namespaced_pod_eviction(
        victim["metadata"]["name"],
        "default",
        {"metadata": {"name": victim["metadata"]["name"], "namespace": "default"}},
    )
    cluster_a.wait_for(
        lambda: (
            len(ready_pods(cluster_a, "web")) == 2
            and victim["metadata"]["name"] not in {p["metadata"]["name"] for p in cluster_a.pods()}
        )
    )
    assert victim["metadata"]["name"] not in [
        p["metadata"]["name"] for p in ready_pods(cluster_a, "web")
    ]
    (new,) = [p for p in ready_pods(cluster_a, "web") if p["metadata"]["uid"] not in before]
    assert new["spec"]["nodeName"] == "a-w-2"


def test_no_fitting_node_leaves_the_pod_pending_with_the_reason(cluster_a: Cluster) -> None:
    core = client.CoreV1Api(cluster_a.api_client())
    core.create_namespaced_pod(
        "default",
        {
            "metadata": {"name": "picky"},
            "spec": {"containers": CONTAINERS, "nodeSelector": {"disk": "ssd"}},
        },
    )

    def scheduled_condition() -> Any:
        pod = core.read_namespaced_pod("picky", "default")
        return next((c for c in pod.status.conditions or [] if c.type == "PodScheduled"), None)

    cond = cluster_a.wait_for(scheduled_condition)
    assert (cond.status, cond.reason) == ("False", "Unschedulable")
    assert cond.message.startswith("0/3 nodes are available: ")
    assert "2 node(s) didn't match Pod's node affinity/selector" in cond.message
    assert "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }" in (
        cond.message
    )
    core.patch_node("a-w-2", {"metadata": {"labels": {"disk": "ssd"}}})
    cluster_a.wait_for(
        lambda: core.read_namespaced_pod("picky", "default").status.phase == "Running"
    )
    assert core.read_namespaced_pod("picky", "default").spec.node_name == "a-w-2"


def test_tolerations_let_a_pod_onto_a_tainted_node(cluster_a: Cluster) -> None:
    core = client.CoreV1Api(cluster_a.api_client())
    for node in ("a-w-1", "a-w-2"):
        core.patch_node(node, {"spec": {"unschedulable": True}})
    tolerate = [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}]
    core.create_namespaced_pod(
        "default",
        {"metadata": {"name": "cp"}, "spec": {"containers": CONTAINERS, "tolerations": tolerate}},
    )
    cluster_a.wait_for(lambda: core.read_namespaced_pod("cp", "default").status.phase == "Running")
    assert core.read_namespaced_pod("cp", "default").spec.node_name == "a-cp-1"


def test_statefulset_pod_comes_back_with_its_name_after_the_old_one_is_gone(
    cluster_a: Cluster,
) -> None:
    raw = cluster_a.api_client()
    apps, core = client.AppsV1Api(raw), client.CoreV1Api(raw)
    labels = {"app": "db"}
    apps.create_namespaced_stateful_set(
        "default",
        {
            "metadata": {"name": "db"},
            "spec": {
                "replicas": 2,
                "serviceName": "db",
                "selector": {"matchLabels": labels},
                "template": template(labels),
            },
        },
    )
    cluster_a.wait_for(lambda: len(ready_pods(cluster_a, "db")) == 2)
    assert sorted(p["metadata"]["name"] for p in ready_pods(cluster_a, "db")) == ["db-0", "db-1"]
    old_uid = cluster_a.pod("default", "db-0")["metadata"]["uid"]
    core.delete_namespaced_pod("db-0", "default")
    uids = []

    def back() -> bool:
        pod = cluster_a.pod("default", "db-0")
        uids.append(pod["metadata"]["uid"] if pod else None)
        return bool(pod and pod["metadata"]["uid"] != old_uid and ready_pods(cluster_a, "db"))

    cluster_a.wait_for(back)
    assert None in uids or uids[0] == old_uid  # the old one went first (same name, new pod)
    cluster_a.wait_for(lambda: len(ready_pods(cluster_a, "db")) == 2)


def test_job_replaces_a_deleted_pod_until_it_succeeds(cluster_a: Cluster) -> None:
    raw = cluster_a.api_client()
    batch, core = client.BatchV1Api(raw), client.CoreV1Api(raw)
    labels = {"app": "batch"}
    batch.create_namespaced_job(
        "default",
        {
            "metadata": {"name": "once"},
            "spec": {"template": template(labels, restartPolicy="Never")},
        },
    )
    cluster_a.wait_for(lambda: len(ready_pods(cluster_a, "batch")) == 1)
    (first,) = ready_pods(cluster_a, "batch")
    assert first["metadata"]["labels"]["job-name"] == "once"
    core.delete_namespaced_pod(first["metadata"]["name"], "default", grace_period_seconds=0)
    cluster_a.wait_for(
        lambda: (
            [p["metadata"]["name"] for p in ready_pods(cluster_a, "batch")]
            not in ([], [first["metadata"]["name"]])
        )
    )
    assert batch.read_namespaced_job("once", "default").status.active == 1


def test_local_volume_pins_the_pod_to_its_node(cluster_a: Cluster) -> None:
    core = client.CoreV1Api(cluster_a.api_client())
    core.create_persistent_volume(
        {
            "metadata": {"name": "local-a-w-2"},
            "spec": {
                "capacity": {"storage": "10Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "local",
                "local": {"path": "/mnt/disk"},
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "kubernetes.io/hostname",
                                        "operator": "In",
                                        "values": ["a-w-2"],
                                    }
                                ]
                            }
                        ]
                    }
                },
            },
        }
    )
    core.create_namespaced_persistent_volume_claim(
        "default",
        {
            "metadata": {"name": "data"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "local",
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
    )
    assert core.read_namespaced_persistent_volume_claim("data", "default").status.phase == "Pending"
    volumes = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    core.create_namespaced_pod(
        "default",
        {"metadata": {"name": "user"}, "spec": {"containers": CONTAINERS, "volumes": volumes}},
    )
    cluster_a.wait_for(
        lambda: core.read_namespaced_pod("user", "default").status.phase == "Running"
    )
    assert core.read_namespaced_pod("user", "default").spec.node_name == "a-w-2"
    claim = core.read_namespaced_persistent_volume_claim("data", "default")
    assert (claim.status.phase, claim.spec.volume_name) == ("Bound", "local-a-w-2")
    volume = core.read_persistent_volume("local-a-w-2")
    assert (volume.status.phase, volume.spec.claim_ref.name) == ("Bound", "data")
    core.patch_node("a-w-2", {"spec": {"unschedulable": True}})
    core.delete_namespaced_pod("user", "default", grace_period_seconds=0)
    core.create_namespaced_pod(
        "default",
        {"metadata": {"name": "user"}, "spec": {"containers": CONTAINERS, "volumes": volumes}},
    )

    def reason() -> str:
        pod = core.read_namespaced_pod("user", "default")
        cond = next((c for c in pod.status.conditions or [] if c.type == "PodScheduled"), None)
        return cond.message if cond is not None and cond.status == "False" else ""

    message = cluster_a.wait_for(reason)
    assert "1 node(s) had volume node affinity conflict" in message
    assert "1 node(s) were unschedulable" in message


def test_budget_status_follows_a_deployments_ready_pods(cluster_a: Cluster) -> None:
    raw = cluster_a.api_client()
    apps, core, policy = client.AppsV1Api(raw), client.CoreV1Api(raw), client.PolicyV1Api(raw)
    apps.create_namespaced_deployment("default", deployment("web", 4))
    policy.create_namespaced_pod_disruption_budget(
        "default",
        {
            "metadata": {"name": "web"},
            "spec": {"maxUnavailable": "25%", "selector": {"matchLabels": {"app": "web"}}},
        },
    )

    def status() -> Any:
        return policy.read_namespaced_pod_disruption_budget("web", "default").status

    cluster_a.wait_for(lambda: status().current_healthy == 4)
    got = status()
    assert (got.expected_pods, got.desired_healthy, got.disruptions_allowed) == (4, 3, 1)
    assert {c.type: c.reason for c in got.conditions} == {"DisruptionAllowed": "SufficientPods"}
    for node in ("a-w-1", "a-w-2"):
        core.patch_node(node, {"spec": {"unschedulable": True}})
    victim = ready_pods(cluster_a, "web")[0]["metadata"]["name"]
    core.create_namespaced_pod_eviction(
        victim, "default", {"metadata": {"name": victim, "namespace": "default"}}
    )
    cluster_a.wait_for(lambda: status().current_healthy == 3 and victim not in str(status()))
    got = status()
    assert (got.disruptions_allowed, got.conditions[0].reason) == (0, "InsufficientPods")


def test_deleting_a_deployment_removes_its_replicasets_and_pods(cluster_a: Cluster) -> None:
    apps = client.AppsV1Api(cluster_a.api_client())
    apps.create_namespaced_deployment("default", deployment("web", 2))
    cluster_a.wait_for(lambda: len(ready_pods(cluster_a, "web")) == 2)
    apps.delete_namespaced_deployment("web", "default")
    cluster_a.wait_for(lambda: not cluster_a.pods("default"))
    assert apps.list_namespaced_replica_set("default").items == []
