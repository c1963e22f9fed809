"""YAML text in and out, through libyaml (PyYAML's C parser and emitter) when PyYAML has it.

PyYAML's `safe_load` and `safe_dump` are pure Python: a target's kubeadm-config, cluster-info
and kubelet-config, parsed by every migration, were 6.5 % of a worker's CPU in the stitch
benchmark. `CSafeLoader` and `CSafeDumper` build the same documents (the safe tags only) from
C, several times faster; without libyaml the pure-Python classes are used. Errors are PyYAML's
own (`yaml.YAMLError`, with the problem's line where there is one), whichever is used.
"""

from __future__ import annotations

from typing import Any

import yaml

SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
SafeDumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def load(text: str | bytes) -> Any:
    """The one document of `text`, as `yaml.safe_load` reads it."""
    return yaml.load(text, Loader=SafeLoader)


def load_all(text: str | bytes) -> list[Any]:
    """Every document of `text`, as `yaml.safe_load_all` reads them."""
    return list(yaml.load_all(text, Loader=SafeLoader))


def dump(data: Any, **options: Any) -> str:
    """`data` as YAML text, as `yaml.safe_dump` writes it (`options`: sort_keys, ...)."""
    text: str = yaml.dump(data, Dumper=SafeDumper, **options)
    return text
