"""The configured clusters: one `KubeCluster` per name, following its kubeconfig file.

A cluster's client is built on first use and kept while its kubeconfig file stays the same. Each
`get` compares the file's fingerprint (size and mtime, then the content's hash when those moved);
a rewritten file (a rotated client certificate, a new API server address) gets a new client on
the next `get`, so neither the bot nor a worker needs a restart. `pinned()` gives one unit of
work (a migration step) a fixed set of clients, resolved up front.

With `arrivals.directory` configured, the clusters are those under `clusters:` and one per
kubeconfig file in that directory (`hostsdir.py`), as the directory is at each `names` or `get`:
a file dropped there is a cluster for the bot and the workers at once, a file removed is gone.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from kubernetes import client
from kubernetes.config.config_exception import ConfigException
from yaml import YAMLError

from joinops.clusters import files, kubeconfigs
from joinops.clusters.hostsdir import HostsDirectory
from joinops.clusters.kube import KubeCluster
from joinops.clusters.texts import kubeconfig_unusable
from joinops.errors import ConfigError
from joinops.requests.asks import unknown_cluster
from joinops.settings import ClusterConfig, Settings

POOL_SIZE = 32  # connections per cluster; the drain's parallel evictions use them


class ClusterAccess(Protocol):
    """What code that talks to clusters needs: the names, and a client per name."""

    @property
    def names(self) -> list[str]: ...

    def get(self, name: str) -> KubeCluster: ...

    def pinned(self, names: list[str]) -> PinnedClusters: ...


@dataclass(frozen=True)
class _Built:
    fingerprint: files.Fingerprint
    cluster: KubeCluster


class ClusterRegistry:
    """Builds each cluster's client from its kubeconfig as it is now; one unreadable kubeconfig
    only breaks its cluster (ConfigError naming the file)."""

    def __init__(self, settings: Settings, steady_seconds: float = 0.0) -> None:
        """`steady_seconds`: how long each client keeps the reads `steady.py` names (a
        worker's: `steady.STEADY_SECONDS`; 0, the bot's: nothing kept)."""
        self._settings = settings
        self._steady_seconds = steady_seconds
        self._built: dict[str, _Built] = {}
        self._lock = threading.Lock()
        arrivals = settings.arrivals
        self.hosts = HostsDirectory(arrivals.directory, settings.clusters) if arrivals else None

    @property
    def names(self) -> list[str]:
        if self.hosts is None:
            return self._settings.cluster_names
        return sorted([*self._settings.clusters, *self.hosts.scan().clusters])

    @property
    def names_to_parse(self) -> list[str]:
        """The names a command may name: every cluster, and those a hosts file names but that
        are refused (two files, an invalid file), so the answer can say why, not "unknown"."""
        if self.hosts is None:
            return self.names
        view = self.hosts.scan()
        refused = [*view.duplicates, *(bad.cluster for bad in view.invalid if bad.cluster)]
        return sorted({*self._settings.clusters, *view.clusters, *refused})

    def config_for(self, name: str) -> ClusterConfig:
        """How to reach `name` now: configured, or a file of the hosts directory. Raises
        UsageError for an unknown name, ConfigError for a file that names it but is refused."""
        configured = self._settings.clusters.get(name)
        if configured is not None:
            return configured
        if self.hosts is not None:
            view = self.hosts.scan()
            host = view.clusters.get(name)
            if host is not None:
                return ClusterConfig(kubeconfig=Path(host.path), context=host.context)
            refusal = view.refusal(name)
            if refusal is not None:
                raise ConfigError([refusal])
        raise unknown_cluster(name, self.names)

    def get(self, name: str) -> KubeCluster:
        cfg = self.config_for(name)
        with self._lock:
            known = self._built.get(name)
            fingerprint = files.fingerprint(_paths(cfg), known.fingerprint if known else None)
            if known is None or fingerprint != known.fingerprint:
                cluster = self._build(name, cfg)  # ConfigError: the old client stays cached
            else:
                cluster = known.cluster
            self._built[name] = _Built(fingerprint, cluster)  # the newest stat, unread again
            return cluster

    def close(self) -> None:
        """Closes every client's connections, for an owner that is done with the registry (the
        tests' bot harness; `joinops serve` and `joinops worker` end with their process)."""
        with self._lock:
            built, self._built = list(self._built.values()), {}
        for entry in built:
            entry.cluster.api_client.close()

    def pinned(self, names: list[str]) -> PinnedClusters:
        """Clients for `names` as the files are now (ConfigError if one cannot be used); kept
        unchanged for the pinned view's life, whatever happens to the files meanwhile."""
        return PinnedClusters(self, {name: self.get(name) for name in names})

    def _build(self, name: str, cfg: ClusterConfig) -> KubeCluster:
        path = str(cfg.kubeconfig) if cfg.kubeconfig else None
        try:
            configuration = kubeconfigs.load(path, cfg.context)
        except (ConfigException, OSError, ValueError, TypeError, AttributeError, YAMLError) as e:
            where = path or "the active kubeconfig"
            raise ConfigError([kubeconfig_unusable(name, where, cfg.context, _short(e))]) from e
        # A drain evicts in parallel: let that many connections stay open.
        configuration.connection_pool_maxsize = POOL_SIZE
        timeouts = self._settings.timeouts
        return KubeCluster(
            name,
            client.ApiClient(configuration),
            timeouts.api.total_seconds(),
            retry_after_cap=timeouts.retry_after_cap.total_seconds(),
            steady_seconds=self._steady_seconds,
        )


class PinnedClusters:
    """A fixed client per cluster: those given, and any other fetched once on first use."""

    def __init__(self, registry: ClusterRegistry, clusters: dict[str, KubeCluster]) -> None:
        self._registry = registry
        self._clusters = dict(clusters)
        self._lock = threading.Lock()

    @property
    def names(self) -> list[str]:
        return self._registry.names

    def pinned(self, names: list[str]) -> PinnedClusters:
        """A new view as the files are now (the next step's), not this one's clients."""
        return self._registry.pinned(names)

    def get(self, name: str) -> KubeCluster:
        with self._lock:
            if name not in self._clusters:
                self._clusters[name] = self._registry.get(name)
            return self._clusters[name]


def _paths(cfg: ClusterConfig) -> list[str]:
    if cfg.kubeconfig is not None:
        return [str(cfg.kubeconfig)]
    return files.active_kubeconfig_paths()


def _short(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return text[0][:200] if text else type(error).__name__
