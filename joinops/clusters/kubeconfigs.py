"""One cluster's client configuration from a kubeconfig file, keeping only what it uses.

The official loader keeps the whole parsed kubeconfig alive for as long as the client lives (its
token-refresh hook holds the loader). When many clusters share one kubeconfig file, one context
each, every client would keep a copy of every other cluster's entries: memory grows with the
square of the clusters. So the file is read here, cut down to the chosen context with its
cluster and user, and only that is given to the loader. Relative file paths in the kubeconfig
still resolve against the file's own directory, as kubectl does.

The loader leaves a hook that the client calls before every request: it loads the
credentials again when they carry an expiry (an exec plugin's, an auth provider's), and
otherwise only sets the same host, CA and token on the configuration once more — 3.5 % of a
worker's CPU in the stitch benchmark, for nothing. Credentials without an expiry (a token, a
client certificate: read once from the file, as the loader reads them) lose the hook; those
with one keep it and are refreshed as before.

A file is parsed once per content (its SHA-256), with libyaml's C parser when
PyYAML has it: one kubeconfig holding every cluster (64 hosts, say) was otherwise parsed again
for each cluster's client, 85 % of a worker's CPU in the stitch benchmark.
"""

from __future__ import annotations

import copy
import hashlib
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from kubernetes import client
from kubernetes import config as kube_config
from kubernetes.config.kube_config import KubeConfigLoader

from joinops import yamltext

PARSED_KEPT = 64  # file versions whose parsed document is kept
_parsed: OrderedDict[tuple[str, str], Any] = OrderedDict()
_parsed_lock = threading.Lock()


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
    document = parsed(path)
    loader = KubeConfigLoader(
        config_dict=copy.deepcopy(only_context(document, context)),  # the loader may write to it
        active_context=context,
        config_base_path=os.path.dirname(os.path.abspath(path)),
    )
    loader.load_and_set(configuration)
    if "expiry" not in loader.__dict__:
        configuration.refresh_api_key_hook = None  # nothing would ever be refreshed
    return configuration


def parsed(path: str) -> Any:
    """The file's YAML document, parsed once per content of the file (read each time: reading
    is cheap, parsing is not). Raises OSError, UnicodeDecodeError and yaml.YAMLError as
    reading and parsing do."""
    content = Path(path).read_bytes()
    version = (os.path.abspath(path), hashlib.sha256(content).hexdigest())
    with _parsed_lock:
        if version in _parsed:
            _parsed.move_to_end(version)
            return _parsed[version]
    document = yamltext.load(content.decode())
    with _parsed_lock:
        _parsed[version] = document
        while len(_parsed) > PARSED_KEPT:
            _parsed.popitem(last=False)
    return document


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
