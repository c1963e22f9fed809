"""One cluster's client configuration from a kubeconfig file, keeping only what it uses.

The official loader keeps the whole parsed kubeconfig alive for as long as the client lives (its
token-refresh hook holds the loader). When many clusters share one kubeconfig file, one context
each, every client would keep a copy of every other cluster's entries: memory grows with the
square of the clusters. So the file is read here, cut down to the chosen context with its
cluster and user, and only that is given to the loader. Relative file paths in the kubeconfig
still resolve against the file's own directory, as kubectl does.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client
from kubernetes import config as kube_config
from kubernetes.config.kube_config import KubeConfigLoader


def load(path: str | None, context: str | None) -> client.Configuration:
    """The client configuration for `context` (or the file's current context) of `path`; with
    no path, the active kubeconfig (KUBECONFIG's files merged, or ~/.kube/config). Raises what
    the official loader raises for a file it cannot use."""
    configuration = client.Configuration()
    if path is None:
        kube_config.load_kube_config(
            context=context, client_configuration=configuration, persist_config=False
        )
        return configuration
    document = yaml.safe_load(Path(path).read_text())
    loader = KubeConfigLoader(
        config_dict=only_context(document, context),
        active_context=context,
        config_base_path=os.path.dirname(os.path.abspath(path)),
    )
    loader.load_and_set(configuration)
    return configuration


def only_context(document: Any, context: str | None) -> Any:
    """`document` with just `context` (or its current context), that context's cluster and
    user. Anything that does not resolve cleanly is left whole, for the loader to refuse with
    its own words."""
    if not isinstance(document, dict):
        return document
    name = context or document.get("current-context")
    entry = _named(document.get("contexts"), name)
    details = entry.get("context") if entry else None
    if not isinstance(details, dict):
        return document
    cluster = _named(document.get("clusters"), details.get("cluster"))
    user = _named(document.get("users"), details.get("user"))
    if cluster is None or user is None:
        return document
    return {
        **{k: v for k, v in document.items() if k not in ("contexts", "clusters", "users")},
        "current-context": name,
        "contexts": [entry],
        "clusters": [cluster],
        "users": [user],
    }


def _named(entries: Any, name: Any) -> dict[str, Any] | None:
    if not isinstance(entries, list) or not isinstance(name, str):
        return None
    for entry in entries:
        if isinstance(entry, dict) and entry.get("name") == name:
            return entry
    return None
