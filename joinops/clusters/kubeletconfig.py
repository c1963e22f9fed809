"""The cluster-wide kubelet configuration of a kubeadm cluster, read from the cluster.

kubeadm keeps it in ConfigMap `kube-system/kubelet-config`, key `kubelet`: a
`KubeletConfiguration` (kubelet.config.k8s.io/v1beta1) written at `kubeadm init`
(cmd/kubeadm/app/phases/kubelet/config.go `CreateConfigMap`) and downloaded by every `kubeadm join`
into the joining node's `/var/lib/kubelet/config.yaml`. So it says how a node moved into the
cluster will run its kubelet.

A cluster without the ConfigMap (not made by kubeadm, or older than 1.24's unversioned name), or
without the key, reads as the defaults: no cgroup driver known (None), no serving-certificate
bootstrap (False). A ConfigMap whose `kubelet` is not a YAML mapping is an error
(`ClusterError`): kubeadm join would fail on it too, and guessing would hide that.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from joinops import yamltext
from joinops.clusters import texts
from joinops.clusters.kube import KubeCluster
from joinops.errors import ClusterError, ClusterNotFound

NAMESPACE = "kube-system"
NAME = "kubelet-config"
KEY = "kubelet"


@dataclass(frozen=True)
class KubeletConfig:
    """What joinops reads of a cluster's KubeletConfiguration."""

    cgroup_driver: str | None = None  # `cgroupDriver`: systemd, cgroupfs; None when unset
    server_tls_bootstrap: bool = False  # `serverTLSBootstrap`: kubelets ask for serving certs


def read_kubelet_config(cluster: KubeCluster) -> KubeletConfig:
    """The cluster's `kube-system/kubelet-config`, parsed; the defaults without it. One GET, or
    none when the client kept it (a worker's, a few seconds: `steady.py`)."""
    return cluster.steady.get("kubelet-config", lambda: _read(cluster))


def _read(cluster: KubeCluster) -> KubeletConfig:
    try:
        cm = cluster.call(
            "get",
            f"configmaps/{NAME}",
            cluster.core.read_namespaced_config_map,
            NAME,
            NAMESPACE,
        )
    except ClusterNotFound:
        return KubeletConfig()
    text = (cm.data or {}).get(KEY)
    if text is None:
        return KubeletConfig()
    return parse_kubelet_config(cluster.name, text)


def parse_kubelet_config(cluster: str, text: str) -> KubeletConfig:
    """A KubeletConfiguration document; `ClusterError` when it is not a YAML mapping."""
    try:
        doc: Any = yamltext.load(text)
    except yaml.YAMLError as e:
        line = getattr(getattr(e, "problem_mark", None), "line", None)
        raise ClusterError(
            cluster, texts.kubelet_config_unreadable(NAMESPACE, NAME, KEY, line)
        ) from e
    if doc is None:
        return KubeletConfig()
    if not isinstance(doc, dict):
        raise ClusterError(cluster, texts.kubelet_config_unreadable(NAMESPACE, NAME, KEY, None))
    driver = doc.get("cgroupDriver")
    return KubeletConfig(
        cgroup_driver=str(driver) if driver else None,
        server_tls_bootstrap=doc.get("serverTLSBootstrap") is True,
    )
