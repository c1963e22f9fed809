"""joinops's drain under a PodDisruptionBudget on a cluster whose controllers replace evicted
pods: it finishes because replacements come up elsewhere, and the budget never breaks."""

from __future__ import annotations

import threading
import time
from typing import Any

import urllib3
from kubernetes import client, watch

from joinops.clusters.kube import KubeCluster
from kubesim import NodeSpec, World
from workers.drain import cordon, drain

LABELS = {"app": "web"}


def web_deployment(replicas: int) -> dict[str, Any]:
    return {
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": LABELS},
            "template": {
                "metadata": {"labels": LABELS},
                "spec": {
                    "containers": [{"name": "web", "image": "nginx:1.27"}],
                    "terminationGracePeriodSeconds": 1,
                },
            },
        },
    }


class BudgetWatch:
    """Every currentHealthy the budget reports, read from a watch until stopped."""

    def __init__(self, policy: client.PolicyV1Api) -> None:
        self.policy = policy
        self.healthy: list[int] = []
        self._seen = threading.Condition()  # notified at every value the watch reports
        self._stream = watch.Watch()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> BudgetWatch:
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            self._follow()
        except urllib3.exceptions.HTTPError:
            pass  # the simulated cluster shut down under the watch at the end of the test

    def _follow(self) -> None:
        for event in self._stream.stream(
            self.policy.list_namespaced_pod_disruption_budget,
            "default",
            field_selector="metadata.name=web",
            timeout_seconds=60,
        ):
            status = event["object"].status
            if status is not None and status.current_healthy is not None:
                with self._seen:
                    self.healthy.append(status.current_healthy)
                    self._seen.notify_all()

    def wait_last(self, value: int, timeout: float = 60.0) -> None:
        """Until the watch's latest report is `value` (an event of the watch's own thread,
        which the world's wait_for would not be woken by)."""
        with self._seen:
            reached = self._seen.wait_for(
                lambda: bool(self.healthy) and self.healthy[-1] == value, timeout
            )
        assert reached, f"the budget never reported currentHealthy={value}: {self.healthy}"

    def stop(self) -> None:
        self._stream.stop()


def test_deployment_under_min_available_drains_completely_without_breaking_the_budget() -> None:
    with World(pod_grace_seconds=0.05, pdb_sync_seconds=0.01, pod_start_seconds=0.05) as world:
        cluster = world.add_cluster(
            "clusterA",
            nodes=[
                NodeSpec("a-cp-1", role="control-plane"),
                NodeSpec("a-w-1"),
                NodeSpec("a-w-2"),
                NodeSpec("a-w-3"),
            ],
        )
        raw = cluster.api_client()
        core, apps, policy = client.CoreV1Api(raw), client.AppsV1Api(raw), client.PolicyV1Api(raw)
        for other in ("a-w-2", "a-w-3"):  # all five start on a-w-1
            core.patch_node(other, {"spec": {"unschedulable": True}})
        apps.create_namespaced_deployment("default", web_deployment(5))
        policy.create_namespaced_pod_disruption_budget(
            "default",
            {
                "metadata": {"name": "web"},
                "spec": {"minAvailable": 3, "selector": {"matchLabels": LABELS}},
            },
        )

        def budget() -> Any:
            return policy.read_namespaced_pod_disruption_budget("web", "default").status

        world.wait_for(lambda: budget().current_healthy == 5 and budget().disruptions_allowed == 2)
        assert {p["spec"]["nodeName"] for p in cluster.pods("default")} == {"a-w-1"}
        for other in ("a-w-2", "a-w-3"):
            core.patch_node(other, {"spec": {"unschedulable": None}})
        observed = BudgetWatch(policy).start()
        kube = KubeCluster("clusterA", raw, timeout_seconds=5)
        cordon(kube, "a-w-1")
        result = drain(kube, "a-w-1", deadline=time.time() + 30, progress=lambda *_: None)
        world.wait_for(lambda: budget().current_healthy == 5)
        observed.wait_last(5)
        observed.stop()

        assert result.done and result.remaining == []
        assert result.evicted == 5
        assert result.rate_limited > 0  # the budget did hold evictions back
        assert not [p for p in cluster.pods("default") if p["spec"]["nodeName"] == "a-w-1"]
        assert {p["spec"]["nodeName"] for p in cluster.pods("default")} <= {"a-w-2", "a-w-3"}
        assert min(observed.healthy) == 3  # down to the budget's floor, never below
