"""Helpers shared by the kubesim tests (official-client API objects for a cluster)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kubernetes import client

from kubesim import Cluster, NodeSpec, World


@dataclass
class Apis:
    core: client.CoreV1Api
    policy: client.PolicyV1Api
    apps: client.AppsV1Api
    raw: client.ApiClient


def apis_for(cluster: Cluster) -> Apis:
    raw = cluster.api_client()
    return Apis(client.CoreV1Api(raw), client.PolicyV1Api(raw), client.AppsV1Api(raw), raw)


def body(exc: client.ApiException) -> dict[str, Any]:
    """The Status body of an API error."""
    result: dict[str, Any] = json.loads(exc.body)
    return result


def standard_cluster(world: World, name: str = "clusterA") -> Cluster:
    """One control plane and two workers (one with an older kubelet), like the fixture."""
    prefix = name[-1].lower()
    return world.add_cluster(
        name,
        version="v1.31.4",
        nodes=[
            NodeSpec(f"{prefix}-cp-1", role="control-plane"),
            NodeSpec(f"{prefix}-w-1"),
            NodeSpec(f"{prefix}-w-2", kubelet_version="v1.30.9"),
        ],
    )


def token_secret(
    token: str, expiration: str | None = None, signing: bool = True, auth: bool = True
) -> dict[str, Any]:
    """A bootstrap token Secret as ``kubeadm token create`` makes it."""
    token_id, secret = token.split(".")
    data = {
        "token-id": token_id,
        "token-secret": secret,
        "usage-bootstrap-authentication": "true" if auth else "false",
        "usage-bootstrap-signing": "true" if signing else "false",
        "auth-extra-groups": "system:bootstrappers:kubeadm:default-node-token",
    }
    if expiration:
        data["expiration"] = expiration
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": f"bootstrap-token-{token_id}", "namespace": "kube-system"},
        "type": "bootstrap.kubernetes.io/token",
        "stringData": data,
    }


def join_configuration(
    endpoint: str,
    token: str,
    ca_hashes: list[str],
    node: str,
    certificate_key: str | None = None,
    api_version: str = "kubeadm.k8s.io/v1beta4",
) -> str:
    import yaml

    doc: dict[str, Any] = {
        "apiVersion": api_version,
        "kind": "JoinConfiguration",
        "discovery": {
            "bootstrapToken": {
                "apiServerEndpoint": endpoint,
                "token": token,
                "caCertHashes": ca_hashes,
            }
        },
        "nodeRegistration": {"name": node, "criSocket": "unix:///var/run/crio/crio.sock"},
    }
    if certificate_key is not None:
        doc["controlPlane"] = {"certificateKey": certificate_key}
    return str(yaml.safe_dump(doc))


def agent_pod(
    node: str,
    secret_name: str,
    namespace: str = "joinops",
    command: str = "cp /config/join.yaml /host/etc/joinops/join.yaml && chroot /host "
    "systemd-run --unit joinops-join sh -c 'kubeadm reset -f && kubeadm join --config "
    "/etc/joinops/join.yaml'",
    privileged: bool = True,
) -> dict[str, Any]:
    """The node agent pod: pinned, privileged, host PID/network, host / and the Secret mounted."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"joinops-agent-{node}", "namespace": namespace},
        "spec": {
            "nodeName": node,
            "hostPID": True,
            "hostNetwork": True,
            "restartPolicy": "Never",
            "tolerations": [{"operator": "Exists"}],
            "containers": [
                {
                    "name": "agent",
                    "image": "registry.example/joinops-agent:1",
                    "command": ["sh", "-c", command],
                    "securityContext": {"privileged": privileged},
                    "volumeMounts": [
                        {"name": "host", "mountPath": "/host"},
                        {"name": "join", "mountPath": "/config", "readOnly": True},
                    ],
                }
            ],
            "volumes": [
                {"name": "host", "hostPath": {"path": "/"}},
                {"name": "join", "secret": {"secretName": secret_name}},
            ],
        },
    }


def upload_certs_pod(node: str, key: str, name: str = "upload-certs") -> dict[str, Any]:
    pod = agent_pod(
        node,
        "unused",
        namespace="kube-system",
        command=f"chroot /host kubeadm init phase upload-certs --upload-certs "
        f"--certificate-key {key}",
    )
    pod["metadata"]["name"] = name
    pod["spec"]["volumes"] = pod["spec"]["volumes"][:1]
    pod["spec"]["containers"][0]["volumeMounts"] = pod["spec"]["containers"][0]["volumeMounts"][:1]
    return pod
