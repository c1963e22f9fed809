"""A checked byo.yaml and what it points at, read from disk: the SSH public keys and the extra
Ignition fragments, each checked before anything is created in a cluster.

`resolve_byo(config, where, base_dir)` reads them; `load_and_resolve(path)` loads the file
(joinops.ignition.byo) and resolves it. Problems are `UsageError`s naming the file and the key.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from joinops.errors import UsageError
from joinops.ignition import texts
from joinops.ignition.byo import DEFAULT_OS_REGISTRY, ByoConfig, load_byo, split_os_registry
from joinops.ignition.validate import fragment_problems

_SSH_KEY = re.compile(
    r"^(?:\S+\s+)?(ssh-(rsa|dss|ed25519)|ecdsa-sha2-nistp(256|384|521)|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)\s+[A-Za-z0-9+/]+={0,3}(\s.*)?$"
)


@dataclass(frozen=True)
class ExtraIgnition:
    """One Ignition fragment to merge last, and where it came from."""

    source: str  # a path, or "extraIgnitionInline"
    config: dict[str, Any]


@dataclass(frozen=True)
class ResolvedByo:
    """A checked byo.yaml and what it points at, read from disk."""

    config: ByoConfig
    where: str  # the file's path (or "request" for a stored configuration)
    ssh_keys: tuple[str, ...] = ()
    extras: tuple[ExtraIgnition, ...] = field(default=())

    @property
    def os_update(self) -> tuple[str, str, str] | None:
        """(transport, registry, tag) for the OCK update service, or None when not asked."""
        cfg = self.config
        if not cfg.os_registry and not cfg.os_tag:
            return None
        transport, registry = split_os_registry(cfg.os_registry or DEFAULT_OS_REGISTRY)
        return transport, registry, cfg.os_tag


def resolve_byo(config: ByoConfig, where: str, base_dir: Path | None) -> ResolvedByo:
    """Read the SSH key file and the extra Ignition the configuration names, and check them.

    Relative paths are taken from `base_dir` (the byo.yaml's directory), as the reference does
    for `extraIgnition`; `~` is the user's home. `base_dir=None` refuses paths altogether.
    """
    keys: list[str] = []
    if config.ssh_public_key:
        keys = _ssh_keys(config.ssh_public_key, f"{where}: sshPublicKey")
    elif config.ssh_public_key_path:
        path = _path(config.ssh_public_key_path, base_dir, where, "sshPublicKeyPath")
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            raise UsageError(texts.ssh_key_unreadable(where, path, reason)) from None
        keys = _ssh_keys(text, f"{where}: sshPublicKeyPath {path}")
    extras: list[ExtraIgnition] = []
    if config.extra_ignition:
        path = _path(config.extra_ignition, base_dir, where, "extraIgnition")
        extras += _extra_from_path(path, where)
    if config.extra_ignition_inline:
        extras.append(
            ExtraIgnition(
                "extraIgnitionInline",
                parse_extra(config.extra_ignition_inline, f"{where}: extraIgnitionInline"),
            )
        )
    return ResolvedByo(config, where, tuple(keys), tuple(extras))


def load_and_resolve(path: Path) -> ResolvedByo:
    config = load_byo(path)
    return resolve_byo(config, str(path), path.resolve().parent)


def parse_extra(text: str, where: str) -> dict[str, Any]:
    """An Ignition fragment (spec 3.0.0 to 3.4.0, JSON); UsageError naming every problem."""
    try:
        raw = json.loads(text)
    except ValueError as e:
        hint = texts.BUTANE_HINT if _looks_like_yaml(text) else ""
        raise UsageError(texts.extra_not_json(where, str(e), hint)) from None
    if not isinstance(raw, dict):
        raise UsageError(texts.extra_not_object(where))
    problems = fragment_problems(raw)
    if problems:
        raise UsageError("\n".join(f"{where}: {p}" for p in problems))
    return raw


# --- helpers ---


def _path(value: str, base_dir: Path | None, where: str, key: str) -> Path:
    path = Path(value).expanduser()
    if path.is_absolute():
        return path
    if base_dir is None:
        raise UsageError(texts.relative_path_without_base(where, key, value))
    return base_dir / path


def _ssh_keys(text: str, where: str) -> list[str]:
    keys = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if "PRIVATE KEY" in line:
            raise UsageError(texts.ssh_key_is_private(where))
        if not _SSH_KEY.match(line):
            raise UsageError(texts.ssh_key_invalid(where, line))
        keys.append(line)
    if not keys:
        raise UsageError(texts.ssh_key_empty(where))
    return keys


def _extra_from_path(path: Path, where: str) -> list[ExtraIgnition]:
    """A file, or every `*.ign` / `*.json` file of a directory in name order."""
    label = f"{where}: extraIgnition {path}"
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in (".ign", ".json") and p.is_file())
        if not files:
            raise UsageError(texts.extra_dir_empty(label))
    else:
        files = [path]
    found = []
    for file in files:
        try:
            text = file.read_text()
        except (OSError, UnicodeDecodeError) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            raise UsageError(texts.extra_unreadable(label, file, reason)) from None
        found.append(ExtraIgnition(str(file), parse_extra(text, f"{where}: extraIgnition {file}")))
    return found


def _looks_like_yaml(text: str) -> bool:
    try:
        return isinstance(yaml.safe_load(text), dict)
    except yaml.YAMLError:
        return False
