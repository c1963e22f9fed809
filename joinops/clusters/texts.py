"""What joinops says about reaching clusters: kubeconfig files and API servers."""

from __future__ import annotations


def kubeconfig_unusable(cluster: str, where: str, context: str | None, reason: str) -> str:
    ctx = f", context {context!r}" if context else ""
    return f"clusters.{cluster}: cannot use kubeconfig {where}{ctx}: {reason}"


def cannot_reach(reasons: str) -> str:
    return (
        f"Could not reach the clusters to check the move (this is not a rule refusal): {reasons} "
        "Check the API server address and the kubeconfig's credentials, then retry."
    )
