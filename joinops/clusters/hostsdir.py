"""The hosts directory (`arrivals.directory`): every kubeconfig file in it is one cluster.

A provisioning system drops one file per host it hands over (or a Secret is projected there).
The cluster is named after the file, its extension (`.yaml`, `.yml`, `.conf`, `.kubeconfig`)
dropped; a file whose name cannot be a cluster name (`admin conf (1)`) is named after its single
context instead. The file's current-context is used, or its only context.

`scan()` lists the directory as it is now: a file is read again only when its size, mtime or
inode moved (a projected Secret swaps a symlink: a new inode), so calling it on every cluster
lookup costs a directory listing and a stat per file. Hidden files (`..data`, editors' and
provisioners' temporary files) and directories are skipped. Two files naming the same cluster
are both refused until one goes; a file naming a cluster configured under `clusters:` is refused.
Nothing here raises for a bad file: its problem is in the view.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from joinops.clusters import files, texts
from joinops.settings import CLUSTER_NAME

EXTENSIONS = (".yaml", ".yml", ".conf", ".kubeconfig")


@dataclass(frozen=True)
class HostFile:
    """One file of the directory, as last read."""

    file: str  # its name in the directory
    path: str
    cluster: str  # the cluster it names; "" when no name could be made
    context: str | None  # the context to use
    digest: str  # sha256 of the content
    modified: float  # mtime, seconds since the epoch
    problem: str = ""  # why it is not a usable kubeconfig; "" when it is

    @property
    def usable(self) -> bool:
        return not self.problem


@dataclass(frozen=True)
class HostsView:
    """The directory at one moment."""

    directory: str
    clusters: dict[str, HostFile] = field(default_factory=dict)  # usable, by cluster name
    invalid: tuple[HostFile, ...] = ()  # files that are not usable kubeconfigs
    duplicates: dict[str, tuple[str, ...]] = field(default_factory=dict)  # name -> its files

    def refusal(self, name: str) -> str | None:
        """Why the cluster `name` is refused, when a file names it but cannot be used."""
        if name in self.duplicates:
            return texts.hosts_duplicate(name, list(self.duplicates[name]))
        for bad in self.invalid:
            if bad.cluster == name:
                return texts.hosts_file_invalid(self.directory, bad.file, bad.problem)
        return None


class HostsDirectory:
    """Reads `directory` on each `scan()`, re-reading only the files that changed."""

    def __init__(self, directory: Path, configured: Collection[str] = ()) -> None:
        self.directory = directory
        self._configured = frozenset(configured)
        self._read: dict[str, tuple[tuple[int, int, int], HostFile]] = {}
        self._lock = threading.Lock()

    def scan(self) -> HostsView:
        entries = self._entries()
        with self._lock:
            current = {name: self._file(name, stat) for name, stat in entries}
            self._read = {n: (s, current[n]) for n, s in entries}
        return self._view(list(current.values()))

    def _entries(self) -> list[tuple[str, tuple[int, int, int]]]:
        try:
            listing = list(os.scandir(self.directory))
        except OSError:
            return []  # not there (yet): no hosts
        found = []
        for entry in listing:
            if entry.name.startswith("."):
                continue
            try:
                st = os.stat(entry.path)  # follows a projected Secret's symlink
            except OSError:
                continue
            if not os.path.isfile(entry.path):
                continue
            found.append((entry.name, (st.st_size, st.st_mtime_ns, st.st_ino)))
        return sorted(found)

    def _file(self, name: str, stat: tuple[int, int, int]) -> HostFile:
        known = self._read.get(name)
        if known is not None and known[0] == stat:
            return known[1]
        return read_host_file(self.directory / name, stat[1] / 1e9)

    def _view(self, found: list[HostFile]) -> HostsView:
        by_name: dict[str, list[HostFile]] = {}
        invalid: list[HostFile] = []
        for host in found:
            if host.usable and host.cluster in self._configured:
                host = _with_problem(host, texts.hosts_file_configured(host.cluster))
            if host.usable:
                by_name.setdefault(host.cluster, []).append(host)
            else:
                invalid.append(host)
        clusters = {n: hs[0] for n, hs in by_name.items() if len(hs) == 1}
        duplicates = {n: tuple(h.file for h in hs) for n, hs in by_name.items() if len(hs) > 1}
        return HostsView(str(self.directory), clusters, tuple(invalid), duplicates)


def _with_problem(host: HostFile, problem: str) -> HostFile:
    return HostFile(
        host.file, host.path, host.cluster, host.context, host.digest, host.modified, problem
    )


def read_host_file(path: Path, modified: float) -> HostFile:
    """One file: its cluster name and context, or its problem (never its content: a kubeconfig
    holds credentials, so a YAML error is reported by line only)."""
    name = path.name
    digest = files.fingerprint([str(path)]).files[0].digest
    try:
        raw = yaml.safe_load(path.read_text())
    except OSError as e:
        problem = _unreadable(e)
        return HostFile(name, str(path), _cluster_name(name, {}), None, digest, modified, problem)
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        mark = getattr(e, "problem_mark", None)
        problem = texts.hosts_file_not_yaml(mark.line + 1 if mark is not None else None)
        return HostFile(name, str(path), _cluster_name(name, {}), None, digest, modified, problem)
    context, problem = _context(raw)
    cluster = _cluster_name(name, raw if isinstance(raw, dict) else {})
    if not problem and not cluster:
        problem = texts.hosts_file_no_name(name)
    return HostFile(name, str(path), cluster, context, digest, modified, problem)


def _unreadable(error: OSError) -> str:
    return texts.hosts_file_unreadable(error.strerror or type(error).__name__)


def _cluster_name(file: str, raw: dict[str, Any]) -> str:
    stem = next((file[: -len(x)] for x in EXTENSIONS if file.endswith(x) and file != x), file)
    if re.fullmatch(CLUSTER_NAME, stem):
        return stem
    contexts = _named(raw.get("contexts"))
    if len(contexts) == 1 and re.fullmatch(CLUSTER_NAME, next(iter(contexts))):
        return next(iter(contexts))
    return ""


def _named(items: Any) -> dict[str, dict[str, Any]]:
    """A kubeconfig list (`clusters`, `users`, `contexts`) by name."""
    if not isinstance(items, list):
        return {}
    return {
        str(item["name"]): item
        for item in items
        if isinstance(item, dict) and item.get("name") and isinstance(item.get(_inner(item)), dict)
    }


def _inner(item: dict[str, Any]) -> str:
    return next((k for k in ("context", "cluster", "user") if k in item), "context")


def _context(raw: Any) -> tuple[str | None, str]:
    """The context to use and the problem with the file ("" when none)."""
    if not isinstance(raw, dict):
        return None, texts.hosts_file_not_kubeconfig("the file is not a mapping")
    contexts = _named(raw.get("contexts"))
    if not contexts:
        return None, texts.hosts_file_no_contexts()
    current = raw.get("current-context")
    if current in contexts:
        chosen = str(current)
    elif len(contexts) == 1:
        chosen = next(iter(contexts))
    else:
        return None, texts.hosts_file_which_context(len(contexts))
    inner = contexts[chosen]["context"]
    cluster_name, user_name = str(inner.get("cluster") or ""), str(inner.get("user") or "")
    clusters, users = _named(raw.get("clusters")), _named(raw.get("users"))
    if cluster_name not in clusters:
        return chosen, texts.hosts_file_context_refers(chosen, "the cluster", cluster_name)
    if user_name and user_name not in users:
        return chosen, texts.hosts_file_context_refers(chosen, "the user", user_name)
    if not clusters[cluster_name]["cluster"].get("server"):
        return chosen, texts.hosts_file_no_server(cluster_name)
    return chosen, ""
