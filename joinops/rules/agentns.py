"""The source's agent namespace must let Pod Security admit the node agent.

The agent is a privileged pod (hostPID, hostNetwork, the host's `/` mounted). joinops creates
its namespace with `pod-security.kubernetes.io/enforce=privileged` when it is missing, but an
existing namespace enforcing `baseline` or `restricted` rejects the pod with a 403 — at the
agent step, after the drain. So the rules read the namespace first: one GET. Missing: fine (it
will be made privileged). No enforce label: the cluster's default, taken as allowed. Any other
value than `privileged` (even a malformed one, which Pod Security reads as `restricted`): refused.
"""

from __future__ import annotations

from dataclasses import dataclass

from joinops.clusters.kube import KubeCluster
from joinops.errors import ClusterNotFound
from joinops.rules import texts as rule_texts
from joinops.rules.findings import Finding, Severity
from joinops.settings import AgentConfig

ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"
PRIVILEGED = "privileged"
DEFAULT_NAMESPACE = AgentConfig().namespace  # config agent.namespace, when not given


@dataclass(frozen=True)
class AgentNamespace:
    """The agent namespace as a source shows it: its enforce level, or None (missing, or no
    label)."""

    name: str
    enforce: str | None

    def findings(self, source: str) -> list[Finding]:
        if self.enforce is None or self.enforce == PRIVILEGED:
            return []
        text = rule_texts.agent_namespace_pod_security(source, self.name, self.enforce)
        return [Finding(Severity.REFUSAL, "agent-pod-security", text)]


def read(source: KubeCluster, namespace: str = DEFAULT_NAMESPACE) -> AgentNamespace:
    """One GET of the namespace; raises ClusterError when the source does not answer."""
    try:
        found = source.call("get", f"namespaces/{namespace}", source.core.read_namespace, namespace)
    except ClusterNotFound:
        return AgentNamespace(namespace, None)
    labels = (found.metadata.labels if found.metadata else None) or {}
    level = labels.get(ENFORCE_LABEL)
    return AgentNamespace(namespace, None if level is None else str(level))
