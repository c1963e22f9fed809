"""What runs in the sandbox's clusterA, made through the official client as a user would:
a `web` Deployment under a PodDisruptionBudget (so a drain needs the replacements to come up
elsewhere), and one bare `debug` pod that no controller would recreate."""

from __future__ import annotations

from typing import Any

from kubernetes import client

WEB_LABELS = {"app": "web"}
WEB_REPLICAS = 5
WEB_MIN_AVAILABLE = 3
BARE_POD = "debug"
BARE_POD_NODE = "a-w-2"  # not a-w-1, the node the README moves
GRACE_SECONDS = 1


def _container() -> dict[str, Any]:
    return {"name": "web", "image": "nginx:1.27"}


def web_deployment() -> dict[str, Any]:
    return {
        "metadata": {"name": "web", "labels": dict(WEB_LABELS)},
        "spec": {
            "replicas": WEB_REPLICAS,
            "selector": {"matchLabels": dict(WEB_LABELS)},
            "template": {
                "metadata": {"labels": dict(WEB_LABELS)},
                "spec": {
                    "containers": [_container()],
                    "terminationGracePeriodSeconds": GRACE_SECONDS,
                },
            },
        },
    }


def web_budget() -> dict[str, Any]:
    return {
        "metadata": {"name": "web"},
        "spec": {"minAvailable": WEB_MIN_AVAILABLE, "selector": {"matchLabels": dict(WEB_LABELS)}},
    }


def bare_pod() -> dict[str, Any]:
    return {
        "metadata": {"name": BARE_POD, "labels": {"app": BARE_POD}},
        "spec": {
            "nodeName": BARE_POD_NODE,
            "containers": [{"name": "shell", "image": "busybox:1.36", "command": ["sleep", "1d"]}],
            "terminationGracePeriodSeconds": GRACE_SECONDS,
        },
    }


def create(api_client: client.ApiClient) -> None:
    """Create the workloads (the simulated controllers then start and place the pods).
    The client takes plain manifests as bodies."""
    deployment: Any = web_deployment()
    budget: Any = web_budget()
    pod: Any = bare_pod()
    client.AppsV1Api(api_client).create_namespaced_deployment("default", deployment)
    client.PolicyV1Api(api_client).create_namespaced_pod_disruption_budget("default", budget)
    client.CoreV1Api(api_client).create_namespaced_pod("default", pod)


def ready(api_client: client.ApiClient) -> bool:
    """Every web pod is up and the budget counts them."""
    status = (
        client.PolicyV1Api(api_client)
        .read_namespaced_pod_disruption_budget("web", "default")
        .status
    )
    return bool(status and status.current_healthy == WEB_REPLICAS)
