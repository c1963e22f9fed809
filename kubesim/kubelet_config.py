"""The cluster-wide kubelet configuration kubeadm keeps in ConfigMap ``kube-system/kubelet-config``.

As ``kubeadm init`` writes it (cmd/kubeadm/app/phases/kubelet/config.go ``CreateConfigMap``, with
the defaults of cmd/kubeadm/app/componentconfigs/kubelet.go): key ``kubelet``, a
``KubeletConfiguration`` (kubelet.config.k8s.io/v1beta1) with ``cgroupDriver: systemd`` unless
set, ``rotateCertificates: true``, webhook authentication and authorisation, the cluster CA as
client CA; ``serverTLSBootstrap`` appears only when true (the field is omitted when empty). A
ConfigMap kubeadm generated carries the ``kubeadm.kubernetes.io/component-config.hash``
annotation (``componentconfigs.SignConfigMap``). ``kubeadm join`` downloads it to
``/var/lib/kubelet/config.yaml`` on the node.
"""

from __future__ import annotations

import hashlib
from typing import Any

import yaml

from kubesim import yamltext
from kubesim.objects import configmap_object

NAMESPACE = "kube-system"
NAME = "kubelet-config"
KEY = "kubelet"
HASH_ANNOTATION = "kubeadm.kubernetes.io/component-config.hash"


def kubelet_configuration(
    cgroup_driver: str = "systemd", server_tls_bootstrap: bool = False
) -> str:
    doc: dict[str, Any] = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"cacheTTL": "0s", "enabled": True},
            "x509": {"clientCAFile": "/etc/kubernetes/pki/ca.crt"},
        },
        "authorization": {
            "mode": "Webhook",
            "webhook": {"cacheAuthorizedTTL": "0s", "cacheUnauthorizedTTL": "0s"},
        },
        "cgroupDriver": cgroup_driver,
        "clusterDNS": ["10.96.0.10"],
        "clusterDomain": "cluster.local",
        "containerRuntimeEndpoint": "",
        "healthzBindAddress": "127.0.0.1",
        "healthzPort": 10248,
        "kind": "KubeletConfiguration",
        "rotateCertificates": True,
        "runtimeRequestTimeout": "0s",
        "staticPodPath": "/etc/kubernetes/manifests",
        "syncFrequency": "0s",
    }
    if server_tls_bootstrap:
        doc["serverTLSBootstrap"] = True
    text: str = yaml.safe_dump(doc, default_flow_style=False, sort_keys=True)
    return text


def kubelet_config_map(
    cgroup_driver: str = "systemd", server_tls_bootstrap: bool = False
) -> dict[str, Any]:
    data = {KEY: kubelet_configuration(cgroup_driver, server_tls_bootstrap)}
    obj = configmap_object(NAMESPACE, NAME, data)
    obj["metadata"]["annotations"] = {HASH_ANNOTATION: _checksum(data)}
    return obj


def _checksum(data: dict[str, str]) -> str:
    """componentconfigs.ChecksumForConfigMap: SHA-256 over the sorted keys and their values."""
    digest = hashlib.sha256()
    for key in sorted(data):
        digest.update(key.encode())
        digest.update(data[key].encode())
    return f"sha256:{digest.hexdigest()}"


def server_tls_bootstrap(config_map: dict[str, Any] | None) -> bool:
    """Does this kubelet-config make a joining kubelet ask for a serving certificate?"""
    text = ((config_map or {}).get("data") or {}).get(KEY, "")
    try:
        doc = yamltext.load(text) or {}
    except yaml.YAMLError:
        return False  # kubeadm join would fail on it; no kubelet starts with it
    return isinstance(doc, dict) and doc.get("serverTLSBootstrap") is True
