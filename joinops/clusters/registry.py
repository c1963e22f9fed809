"""The configured clusters: one `KubeCluster` per name, built on first use from settings."""

from __future__ import annotations

import threading

from kubernetes import client
from kubernetes import config as kube_config
from kubernetes.config.config_exception import ConfigException

from joinops.clusters.kube import KubeCluster
from joinops.errors import ConfigError
from joinops.requests.asks import unknown_cluster
from joinops.settings import Settings

POOL_SIZE = 32  # connections per cluster; the drain's parallel evictions use them


class ClusterRegistry:
    """Builds each cluster's client once; one unreadable kubeconfig only breaks its cluster."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._built: dict[str, KubeCluster] = {}
        self._lock = threading.Lock()

    @property
    def names(self) -> list[str]:
        return self._settings.cluster_names

    def get(self, name: str) -> KubeCluster:
        if name not in self._settings.clusters:
            raise unknown_cluster(name, self.names)
        with self._lock:
            if name not in self._built:
                self._built[name] = self._build(name)
            return self._built[name]

    def _build(self, name: str) -> KubeCluster:
        cfg = self._settings.clusters[name]
        path = str(cfg.kubeconfig) if cfg.kubeconfig else None
        configuration = client.Configuration()
        try:
            kube_config.load_kube_config(
                config_file=path,
                context=cfg.context,
                client_configuration=configuration,
                persist_config=False,
            )
        except (ConfigException, OSError, ValueError, TypeError) as e:
            where = path or "the active kubeconfig"
            ctx = f", context {cfg.context!r}" if cfg.context else ""
            raise ConfigError(
                [f"clusters.{name}: cannot use kubeconfig {where}{ctx}: {_short(e)}"]
            ) from e
        # A drain evicts in parallel: let that many connections stay open.
        configuration.connection_pool_maxsize = POOL_SIZE
        timeout = self._settings.timeouts.api.total_seconds()
        return KubeCluster(name, client.ApiClient(configuration), timeout)


def _short(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return text[0][:200] if text else type(error).__name__
