"""Every user-facing line about Ignition files: byo.yaml problems, what the CLI tells the
operator on stderr, and what the engine says in a request's thread. None of them ever holds
the token secret or the certificate key."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

# --- byo.yaml ---

BYO_BOTH_VIP_AND_LB = (
    "virtualIp and loadBalancer are both set: give exactly one (virtualIp when the control "
    "planes share a virtual IP through keepalived, loadBalancer for an external load balancer)"
)
BYO_NEITHER_VIP_NOR_LB = (
    "neither virtualIp nor loadBalancer is set: give exactly one (virtualIp when the control "
    "planes share a virtual IP through keepalived, loadBalancer for an external load balancer)"
)
BYO_NO_INTERFACE = (
    "providers.byo.networkInterface is required: the new host's network interface on the "
    "cluster network (e.g. enp1s0)"
)
BYO_BOTH_SSH_KEYS = "sshPublicKey and sshPublicKeyPath are both set: give one or the other"
BYO_PASSWORD_NOT_HASH = (
    "password must be a crypt(3) password hash (e.g. the output of `openssl passwd -6`), "
    "not a password in clear text"
)
BYO_UNKNOWN_KEY = (
    "unknown key: not a key of the reference CLI's cluster configuration (check the spelling)"
)
BUTANE_HINT = (
    " It looks like YAML: Butane is not read by joinops; translate it first with `butane --strict`."
)


def byo_unreadable(path: Path, reason: str) -> str:
    return f"cannot read the byo configuration {path}: {reason}"


def byo_not_yaml(where: str, error: str) -> str:
    return f"{where}: not valid YAML: {error}"


def byo_not_mapping(where: str) -> str:
    return f"{where}: must hold a mapping of keys (virtualIp, providers.byo...) at the top level"


def byo_wrong_provider(provider: str) -> str:
    return f"provider is {provider!r}: joinops writes Ignition for the byo provider only"


def byo_bad_virtual_ip(value: str) -> str:
    return f"virtualIp {value!r} is not an IP address"


def byo_bad_load_balancer(value: str) -> str:
    return f"loadBalancer {value!r} is not a host name or IP address (give no scheme or port)"


def byo_bad_interface(value: str) -> str:
    return f"providers.byo.networkInterface {value!r} is not a network interface name"


def byo_same_ports(port: int) -> str:
    return (
        f"kubeApiServerBindPort and kubeApiServerBindPortAlt are both {port}: behind a virtual "
        "IP the local load balancer and the API server need different ports"
    )


def byo_bad_version(value: str) -> str:
    return f"kubernetesVersion {value!r} is not a Kubernetes version (e.g. 1.32 or v1.32.4)"


def ssh_key_unreadable(where: str, path: Path, reason: str) -> str:
    return f"{where}: cannot read the SSH public key file {path} (sshPublicKeyPath): {reason}"


def ssh_key_is_private(where: str) -> str:
    return f"{where}: this is a private key: give the public key (the .pub file)"


def ssh_key_invalid(where: str, line: str) -> str:
    return f"{where}: not an SSH public key: {line[:24]!r}..."


def ssh_key_empty(where: str) -> str:
    return f"{where}: holds no SSH public key"


def relative_path_without_base(where: str, key: str, value: str) -> str:
    return f"{where}: {key} {value!r} is relative, and there is no directory to take it from"


def extra_not_json(where: str, error: str, hint: str) -> str:
    return f"{where}: not an Ignition config (JSON): {error}.{hint}"


def extra_not_object(where: str) -> str:
    return f"{where}: an Ignition config is a JSON object"


def extra_dir_empty(label: str) -> str:
    return f"{label}: the directory holds no *.ign or *.json file"


def extra_unreadable(label: str, file: Path, reason: str) -> str:
    return f"{label}: cannot read {file}: {reason}"


# --- command line: input ---


def bad_ttl(value: str, reason: str) -> str:
    return f"--ttl {value!r}: {reason}"


def ttl_out_of_range(low: timedelta, high: timedelta) -> str:
    return f"must be between {span(low)} and {span(high)}"


def commands_file_exists(path: Path) -> str:
    return f"--commands-file {path} already exists: joinops does not overwrite it"


def commands_file_unwritable(path: Path, reason: str) -> str:
    return f"cannot write the commands file {path}: {reason}"


CLUSTER_REQUIRED = "--cluster NAME is required (or --check FILE to check an Ignition file)"


# --- refusals (exit 1) ---


def no_control_plane_endpoint(cluster: str) -> str:
    return (
        f"{cluster} has no controlPlaneEndpoint in its kubeadm configuration: kubeadm cannot "
        "add a control plane to it. Ask for a worker instead."
    )


def no_ready_control_plane(cluster: str) -> str:
    return (
        f"{cluster} has no Ready control-plane node to upload the certificates on: a new control "
        "plane cannot get them."
    )


def version_skew(wanted: str, target: str, allowed: str) -> str:
    return (
        f"byo.yaml's kubernetesVersion {wanted} cannot join a cluster at {target}: the new "
        f"host's kubelet must be {allowed}"
    )


def control_plane_busy(cluster: str, holder: str) -> str:
    return (
        f"{cluster}'s control plane is being changed by {holder}: a certificate upload now would "
        "break it. Try again when it has finished."
    )


# --- command line: what the operator must know (stderr) ---


def summary_head(cluster: str, role: str, version: str, endpoint: str) -> str:
    return (
        f"Ignition for a new {role} of {cluster} ({version}); the host joins through {endpoint} "
        "and registers under its hostname."
    )


def created_token(cluster: str, secret_name: str, expires: float, ttl: timedelta) -> str:
    return (
        f"Created in {cluster}: bootstrap token Secret kube-system/{secret_name}, "
        f"expiring {when(expires)} ({span(ttl)} from now)."
    )


def uploaded_certs(cluster: str, host: str, expires: float, pod: str) -> str:
    return (
        f"Uploaded {cluster}'s control-plane certificates on {host} under a new certificate key "
        f"(Secret kube-system/kubeadm-certs); kubeadm deletes them at {when(expires)}, two hours "
        f"after the upload. The upload ran in pod {pod}, since removed."
    )


def valid_until(moment: float) -> str:
    return f"Valid until {when(moment)}: a host that boots later cannot join with this file."


def revoke(token_id: str, request_id: str) -> str:
    return (
        f"To revoke it early: kubeadm token delete {token_id} "
        f"(what joinops made carries the label joinops.io/request={request_id})."
    )


CERTS_REPLACED = (
    "Another certificate upload to the cluster (a control-plane migration, or another "
    "control-plane Ignition) replaces these certificates and invalidates this file: boot the "
    "host before then."
)
CERTS_KEPT = (
    "While this file is valid, joinops uploads no other certificates to the cluster: a "
    "control-plane migration or another control-plane Ignition into it is refused until then. "
    "An upload by hand (`kubeadm init phase upload-certs`) would still replace them."
)


def nothing_created(cluster: str, reason: str) -> str:
    return f"Nothing was created in {cluster} ({reason})."


NO_CREATE_FLAG = "--no-create"
NO_CREATE_BYO = "byo.yaml: providers.byo.automaticTokenCreation is false"


def run_commands(cluster: str, host: str, path: Path) -> str:
    example = f" (e.g. {host})" if host else ""
    return (
        f"Before the host boots, run as root on a control plane of {cluster}{example} the "
        f"commands in {path} (mode 0600; they hold the join secret, which joinops does not "
        f"print; delete the file afterwards):"
    )


def command_shapes(token_id: str, ttl: str, control_plane: bool) -> list[str]:
    lines = [f"  kubeadm token create {token_id}.<secret> --ttl {ttl} --description ..."]
    if control_plane:
        lines.append(
            "  kubeadm init phase upload-certs --upload-certs --certificate-key <certificate key>"
        )
    return lines


def no_create_validity(ttl: timedelta, control_plane: bool) -> str:
    text = f"The file is valid for {span(ttl)} after the token is created"
    if control_plane:
        text += ", and for two hours after the certificate upload, whichever ends first"
    return text + "."


def extra_overrides(items: list[str]) -> str:
    return f"Extra Ignition overrides what joinops wrote for: {', '.join(items)}."


def extra_replaces_join(item: str) -> str:
    return (
        f"Warning: extra Ignition replaces {item}: the host may not join with the material "
        "joinops made."
    )


def endpoint_differs(byo_host: str, key: str, endpoint: str) -> str:
    return (
        f"Note: byo.yaml's {key} {byo_host} is not the host of the cluster's endpoint "
        f"{endpoint}; the host joins through {endpoint}, as the cluster's kubeadm configuration "
        "says."
    )


def no_byo_control_plane(port: int) -> str:
    return (
        f"Note: no byo.yaml: the control plane's API server listens on {port} and the host takes "
        "no part in a virtual IP."
    )


def redis_unreachable_for_lock(cluster: str) -> str:
    return (
        f"Note: Redis is not reachable, so joinops could not check that no control-plane "
        f"migration of {cluster} is running (a certificate upload now would break it)."
    )


STDOUT_IS_A_TERMINAL = (
    "Note: the file went to a terminal, and it holds the join secret: clear the screen, and "
    "redirect stdout to a file next time (> host.ign)."
)


def sha256_line(digest: str) -> str:
    return f"SHA-256 of the file: {digest}"


def check_ok(path: str) -> str:
    return f"{path}: valid Ignition 3.4.0."


def check_join(api_endpoint: str, role: str) -> str:
    return f"It joins {api_endpoint} as a {role}."


# --- the engine (Slack path): a request's thread ---


def job_started(cluster: str, role: str) -> str:
    return f"Making join material in {cluster} and the Ignition file for a new {role}"


def job_token(secret_name: str, expires: float) -> str:
    return f"bootstrap token Secret kube-system/{secret_name} created, expiring {when(expires)}"


def job_certs(host: str, expires: float) -> str:
    return f"control-plane certificates uploaded on {host}, deleted by kubeadm at {when(expires)}"


def ignition_ready(valid: float, digest: str) -> str:
    return f"Ignition ready: valid until {when(valid)}, sha256 {digest}"


def job_failed(reason: str) -> str:
    return f"No Ignition file: {reason}"


JOB_INTERNAL_ERROR = "an internal error (the worker's log has the details); nothing was kept"
JOB_WRONG_KIND = "this request is not an Ignition request"


# --- formatting ---


def when(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d %H:%M UTC")


def span(duration: timedelta) -> str:
    total = int(duration.total_seconds())
    hours, rest = divmod(total, 3600)
    minutes, seconds = divmod(rest, 60)
    parts = [f"{hours} h" if hours else "", f"{minutes} min" if minutes else ""]
    parts.append(f"{seconds} s" if seconds or not any(parts) else "")
    return " ".join(p for p in parts if p)
