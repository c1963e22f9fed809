"""YAML read through libyaml (PyYAML's C parser) when PyYAML has it, as the real components'
Go parsers read it fast: every simulated join parses its JoinConfiguration and cluster-info's
kubeconfig, every kubelet its kubelet-config, and in pure Python that was about a tenth of the
simulator's CPU in the stitch benchmark (whose simulated clusters share the cores with the
workers they answer). The same documents come out (the safe tags only); errors are PyYAML's
own `yaml.YAMLError`, whichever parser is used.
"""

from __future__ import annotations

from typing import Any

import yaml

SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(text: str | bytes) -> Any:
    """The one document of `text`, as `yaml.safe_load` reads it."""
    return yaml.load(text, Loader=SafeLoader)


def load_all(text: str | bytes) -> list[Any]:
    """Every document of `text`, as `yaml.safe_load_all` reads them."""
    return list(yaml.load_all(text, Loader=SafeLoader))
