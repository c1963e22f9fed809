"""Pod Security admission on pod create: a namespace enforcing `baseline` or `restricted` rejects
a privileged, host-namespace, hostPath pod with 403 and the real message (kubernetes
staging/src/k8s.io/pod-security-admission: admission/admission.go `violates PodSecurity %q: %s`
through admission.NewForbidden; policy/check_hostNamespaces.go, check_hostPathVolumes.go,
check_privileged.go for each reason and detail; checks.go ForbiddenDetail joins them)."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kubesim import NodeSpec, World


def agent_like(name: str) -> dict[str, object]:
    """What joinops's node agent asks for: host PID and network, the host's / , privileged."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "hostPID": True,
            "hostNetwork": True,
            "containers": [
                {
                    "name": "agent",
                    "image": "busybox",
                    "securityContext": {"privileged": True},
                    "volumeMounts": [{"name": "host", "mountPath": "/host"}],
                }
            ],
            "volumes": [{"name": "host", "hostPath": {"path": "/"}}],
        },
    }


@pytest.fixture
def core():  # type: ignore[no-untyped-def]
    with World() as world:
        cluster = world.add_cluster("psa", nodes=[NodeSpec("cp-1", role="control-plane")])
        yield client.CoreV1Api(cluster.api_client())


def labelled(core: client.CoreV1Api, name: str, labels: dict[str, str]) -> None:
    core.create_namespace({"metadata": {"name": name, "labels": labels}})


def test_a_baseline_namespace_rejects_the_agent_pod_with_the_real_message(core) -> None:  # type: ignore[no-untyped-def]
    labelled(core, "locked", {"pod-security.kubernetes.io/enforce": "baseline"})
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_pod("locked", agent_like("agent-1"))
    status = json.loads(refused.value.body)
    assert refused.value.status == 403
    assert status["reason"] == "Forbidden"
    assert status["message"] == (
        'pods "agent-1" is forbidden: violates PodSecurity "baseline:latest": host namespaces '
        '(hostNetwork=true, hostPID=true), hostPath volumes (volume "host"), privileged '
        '(container "agent" must not set securityContext.privileged=true)'
    )
    assert core.list_namespaced_pod("locked").items == []


def test_restricted_with_a_version_names_it(core) -> None:  # type: ignore[no-untyped-def]
    labels = {
        "pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": "v1.31",
    }
    labelled(core, "tight", labels)
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_pod("tight", agent_like("agent-2"))
    message = json.loads(refused.value.body)["message"]
    assert 'violates PodSecurity "restricted:v1.31": host namespaces' in message


def test_privileged_or_unlabelled_namespaces_admit_it(core) -> None:  # type: ignore[no-untyped-def]
    labelled(core, "open", {"pod-security.kubernetes.io/enforce": "privileged"})
    labelled(core, "plain", {})
    core.create_namespaced_pod("open", agent_like("agent-3"))
    core.create_namespaced_pod("plain", agent_like("agent-4"))
    assert core.read_namespaced_pod("agent-4", "plain").metadata.name == "agent-4"


def test_a_baseline_namespace_admits_an_ordinary_pod(core) -> None:  # type: ignore[no-untyped-def]
    labelled(core, "locked", {"pod-security.kubernetes.io/enforce": "baseline"})
    pod = {
        "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "web", "image": "nginx"}]},
    }
    core.create_namespaced_pod("locked", pod)
    assert core.read_namespaced_pod("web", "locked").metadata.name == "web"
