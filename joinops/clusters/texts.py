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


def still_throttled(verb: str, resource: str, message: str, retries: int) -> str:
    return (
        f"{verb} {resource}: still throttled (HTTP 429) after {retries} retries, each after "
        f"the API server's Retry-After: {message}"
    )


# ---- the hosts directory (arrivals.directory): one kubeconfig file per cluster ------------------


def hosts_file_unreadable(reason: str) -> str:
    return f"cannot read it ({reason})"


def hosts_file_not_yaml(line: int | None) -> str:
    where = f" (line {line})" if line else ""
    return f"it is not valid YAML{where}"


def hosts_file_not_kubeconfig(missing: str) -> str:
    return f"it is not a kubeconfig: {missing}"


def hosts_file_no_contexts() -> str:
    return "it is not a kubeconfig: it has no contexts"


def hosts_file_which_context(count: int) -> str:
    return f"it has {count} contexts and no current-context: set current-context to the one to use"


def hosts_file_context_refers(context: str, what: str, name: str) -> str:
    return f"its context {context!r} names {what} {name!r}, which the file does not define"


def hosts_file_no_server(cluster: str) -> str:
    return f"its cluster {cluster!r} has no server address"


def hosts_file_no_name(file: str) -> str:
    return (
        f"no cluster name can be made of the file name {file!r}: rename it to 1-63 letters, "
        "digits, '.', '_' or '-' (an extension .yaml, .yml, .conf or .kubeconfig is dropped)"
    )


def hosts_file_configured(cluster: str) -> str:
    return (
        f"it names the cluster {cluster!r}, which is already configured under `clusters:`: "
        "rename the file"
    )


def hosts_file_invalid(directory: str, file: str, problem: str) -> str:
    return f"{directory}/{file}: {problem}"


def hosts_duplicate(cluster: str, files: list[str]) -> str:
    return (
        f"the files {', '.join(files)} all name the cluster {cluster!r}: none of them is used "
        "until only one is left"
    )


# ---- what an API server's admission refused ------------------------------------------------------


def pod_security_refused(cluster: str, verb: str, resource: str, message: str) -> str:
    return (
        f"{cluster}'s Pod Security admission refused to {verb} {resource}: the namespace "
        f"does not allow privileged pods ({message}). The credentials are not the problem: "
        f"label the agent namespace (config agent.namespace) with "
        f"`pod-security.kubernetes.io/enforce=privileged --overwrite`, or choose another "
        f"agent.namespace."
    )


# ---- a cluster's kubelet configuration (kube-system/kubelet-config) ------------------------------


def kubelet_config_unreadable(namespace: str, name: str, key: str, line: int | None) -> str:
    where = f" (line {line + 1})" if line is not None else ""
    return (
        f"ConfigMap {namespace}/{name}, key `{key}`, is not a KubeletConfiguration in YAML"
        f"{where}: a node joining this cluster could not start its kubelet with it. Fix it "
        f"(`kubectl -n {namespace} edit configmap {name}`) before moving a node in."
    )
