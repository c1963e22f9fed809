"""Kubeconfig documents: the admin-style one for clients, and cluster-info's."""

from __future__ import annotations

from typing import Any

import yaml

from kubesim.objects import b64


def cluster_entry(name: str, server: str, ca_pem: bytes) -> dict[str, Any]:
    return {"name": name, "cluster": {"server": server, "certificate-authority-data": b64(ca_pem)}}


def client_kubeconfig(
    entries: list[tuple[str, str, bytes, str]], current: str | None = None
) -> dict[str, Any]:
    """One context per (context name, server, CA PEM, bearer token)."""
    clusters, users, contexts = [], [], []
    for context, server, ca_pem, token in entries:
        clusters.append(cluster_entry(context, server, ca_pem))
        users.append({"name": f"{context}-joinops", "user": {"token": token}})
        contexts.append(
            {"name": context, "context": {"cluster": context, "user": f"{context}-joinops"}}
        )
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": clusters,
        "users": users,
        "contexts": contexts,
        "current-context": current or (contexts[0]["name"] if contexts else ""),
    }


def cluster_info_kubeconfig(server: str, ca_pem: bytes) -> str:
    """The ``kubeconfig`` key of ``kube-public/cluster-info`` as kubeadm writes it."""
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "clusters": [
            {"cluster": {"certificate-authority-data": b64(ca_pem), "server": server}, "name": ""}
        ],
        "contexts": None,
        "current-context": "",
        "kind": "Config",
        "preferences": {},
        "users": None,
    }
    text: str = yaml.safe_dump(doc, default_flow_style=False, sort_keys=True)
    return text


def dump(doc: dict[str, Any]) -> str:
    text: str = yaml.safe_dump(doc, default_flow_style=False, sort_keys=False)
    return text
