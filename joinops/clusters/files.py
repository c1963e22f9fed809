"""Fingerprints of kubeconfig files: has a file changed since its client was built?"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from kubernetes.config.kube_config import KUBE_CONFIG_DEFAULT_LOCATION


@dataclass(frozen=True)
class FileState:
    path: str
    stat: tuple[int, int, int] | None  # (size, mtime_ns, inode); None: the file is missing
    digest: str  # sha256 of the content; "" when missing or unreadable


@dataclass(frozen=True)
class Fingerprint:
    files: tuple[FileState, ...]

    def __eq__(self, other: object) -> bool:
        """Same content in every file: a touched but unchanged file keeps its client."""
        if not isinstance(other, Fingerprint):
            return NotImplemented
        return [(f.path, f.digest) for f in self.files] == [(f.path, f.digest) for f in other.files]

    def __hash__(self) -> int:
        return hash(tuple((f.path, f.digest) for f in self.files))


def active_kubeconfig_paths() -> list[str]:
    """The files the kubernetes client reads for "the active kubeconfig" (KUBECONFIG's list)."""
    return [os.path.expanduser(p) for p in KUBE_CONFIG_DEFAULT_LOCATION.split(os.pathsep) if p]


def fingerprint(paths: list[str], previous: Fingerprint | None = None) -> Fingerprint:
    """The files' state now. A file whose size, mtime and inode match `previous` is not read
    again: its earlier digest stands."""
    before = {f.path: f for f in previous.files} if previous else {}
    return Fingerprint(tuple(_state(path, before.get(path)) for path in paths))


def _state(path: str, previous: FileState | None) -> FileState:
    try:
        st = os.stat(path)
    except OSError:
        return FileState(path, None, "")
    stat = (st.st_size, st.st_mtime_ns, st.st_ino)
    if previous is not None and previous.stat == stat:
        return previous
    try:
        with open(path, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        digest = ""
    return FileState(path, stat, digest)
