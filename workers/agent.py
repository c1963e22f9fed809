"""Pods joinops runs on nodes: the node agent (re-joins a node) and the certificate upload.

Both are privileged, pinned to one node, with the host's `/` at /host; what they must not show
(the JoinConfiguration, the certificate key) travels in a Secret mounted into the pod, never in
its command line or environment, which anyone who can read pods sees. The node agent hands its
work to a transient systemd unit on the host, so the work survives the kubelet being stopped by
`kubeadm reset`.
"""

from __future__ import annotations

from typing import Any

from joinops.clusters.hostpods import MANAGED_LABELS, privileged_pod
from joinops.ignition.virtual_ip import VIP_MARKER
from joinops.requests.ids import is_request_id
from workers import agent_return, hostcleanup

JOIN_KEY = "join-config.yaml"
CERT_KEY = "certificate-key"
KUBEADM_CONFIG_KEY = "kubeadm-config.yaml"  # the target's ClusterConfiguration, for upload-certs
HOST_JOIN_FILE = "/var/lib/joinops/join-config.yaml"
# What else the join Secret carries for the probes and the agent (none of it secret):
CA_KEY = "ca.crt"  # the target's CA, as cluster-info shows it to the node
ENDPOINT_KEY = "endpoint"  # the target endpoint the node joins (host:port)
PORTS_KEY = "ports"  # the ports kubeadm's join preflight checks, space-separated
NODE_IP_KEY = "node-ip"  # the node-ip the JoinConfiguration gives the kubelet ("" if none)
# The return material (workers/return_material.py), in the same Secret:
RETURN_KEY = "return-config.yaml"  # the source's JoinConfiguration, the node's original role
RETURN_CA_KEY = "source-ca.crt"  # the source's CA, as its cluster-info shows it
RETURN_ENDPOINT_KEY = "source-endpoint"  # the source endpoint (host:port)
RETURN_TOKEN_KEY = "return-token"  # the source bootstrap token: the agent's phases, the join
NODE_NAME_KEY = "node-name"  # read by the unit from the Secret, never put in a script
JOIN_SECONDS_KEY = "join-seconds"  # timeouts.join: no Ready in the target by then, go back
NOT_AFTER_ENV = "JOINOPS_NOT_AFTER"  # epoch seconds: an agent starting later does nothing
NOT_STARTED = "joinops: not started:"  # how the agent's message starts when it did nothing
# Checks a node that is still in its old cluster must fail, ignored in the probe's preflight:
# its own kubelet's and control plane's files. Ports are ignored only while Kubernetes' own
# processes hold them (the reset frees those); any other process on a port fails the probe.
IGNORED_PREFLIGHT = (
    "FileAvailable--etc-kubernetes-kubelet.conf",
    "FileAvailable--etc-kubernetes-bootstrap-kubelet.conf",
    "FileAvailable--etc-kubernetes-pki-ca.crt",
    "DirAvailable--etc-kubernetes-manifests",
    "DirAvailable--var-lib-etcd",
    "FileAvailable--etc-kubernetes-manifests-kube-apiserver.yaml",
    "FileAvailable--etc-kubernetes-manifests-kube-controller-manager.yaml",
    "FileAvailable--etc-kubernetes-manifests-kube-scheduler.yaml",
    "FileAvailable--etc-kubernetes-manifests-etcd.yaml",
)
KUBERNETES_PROCESSES = ("kubelet", "kube-apiserver", "etcd", "kube-controller", "kube-scheduler")
# the CRI sockets kubeadm looks for (cmd/kubeadm/app/constants: known CRI endpoints)
CRI_SOCKETS = (
    "/var/run/containerd/containerd.sock",
    "/var/run/crio/crio.sock",
    "/var/run/cri-dockerd.sock",
)


def unit_name(request_id: str) -> str:
    """The transient systemd unit on the host: `journalctl -u <this>` shows the join."""
    return f"joinops-join-{request_id}"


def agent_pod_name(request_id: str) -> str:
    return f"joinops-agent-{request_id}"


def join_secret_name(request_id: str) -> str:
    return f"joinops-join-{request_id}"


def return_record_name(request_id: str) -> str:
    """The ConfigMap in the source's agent namespace where the agent writes its phases."""
    return f"joinops-return-{request_id}"


def return_group(request_id: str) -> str:
    """The return token's extra group: the Role on the record ConfigMap is bound to it."""
    return f"system:bootstrappers:joinops:{request_id}"


def facts_pod_name(request_id: str) -> str:
    return f"joinops-facts-{request_id}"


def probe_pod_name(request_id: str) -> str:
    return f"joinops-probe-{request_id}"


def check_pod_name(request_id: str) -> str:
    return f"joinops-podcheck-{request_id}"


def upload_pod_name(request_id: str) -> str:
    return f"joinops-upload-certs-{request_id}"


def labels(request_id: str, component: str) -> dict[str, str]:
    return {
        **MANAGED_LABELS,
        "app.kubernetes.io/name": f"joinops-{component}",
        "joinops.io/request": request_id,
    }


def secret(
    namespace: str, name: str, data: dict[str, str], secret_labels: dict[str, str]
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {"name": name, "namespace": namespace, "labels": secret_labels},
        "stringData": data,
    }


def _script_id(request_id: str) -> str:
    """The one variable part of the scripts the agent runs as root on a host: a request id that
    joinops made (`req-` and eight hex digits). Node names, cluster names and anything a person
    typed never go into a script; the node is chosen by the pod's `nodeName`."""
    if not is_request_id(request_id):
        raise ValueError(f"not a request id, so not put in a script: {request_id!r}")
    return request_id


def _deadline_guard() -> str:
    """The agent's first line: past its deadline, joinops gave it up (rolled the move back),
    so a late start does nothing to the host."""
    return (
        f'if [ "$(date +%s)" -gt "${NOT_AFTER_ENV}" ]; then '
        f'echo "{NOT_STARTED} the node agent started after its deadline; nothing done" '
        "> /dev/termination-log; exit 3; fi"
    )


def host_facts_script() -> str:
    """Reads, changing nothing: the kubelet's kubeadm flags, the CRI sockets, the runtime's
    cgroup driver and the host's addresses, one `key: value` line each."""
    sockets = " ".join(CRI_SOCKETS)
    return "\n".join(
        [
            "set -u",
            "flags=$(sed -n 's/^KUBELET_KUBEADM_ARGS=\"\\(.*\\)\"$/\\1/p' "
            "/host/var/lib/kubelet/kubeadm-flags.env 2>/dev/null)",
            'sockets=""',
            f'for s in {sockets}; do [ -S "/host$s" ] && sockets="$sockets unix://$s"; done',
            "driver=unknown",
            "if chroot /host containerd config dump 2>/dev/null | "
            "grep -Eq 'SystemdCgroup *= *true'; then driver=systemd; "
            "elif chroot /host containerd config dump >/dev/null 2>&1; then driver=cgroupfs; "
            "elif chroot /host crio config 2>/dev/null | "
            "grep -Eq 'cgroup_manager *= *.cgroupfs'; then driver=cgroupfs; "
            "elif chroot /host crio config >/dev/null 2>&1; then driver=systemd; fi",
            "addrs=$(chroot /host ip -o addr show scope global | awk '{print $4}' | "
            "cut -d/ -f1 | tr '\\n' ' ')",
            "printf 'kubeadm-flags: %s\\ncri-sockets: %s\\ncgroup-driver: %s\\naddresses: %s\\n' "
            '"$flags" "${sockets# }" "$driver" "$addrs" > /dev/termination-log',
        ]
    )


def preflight_script(request_id: str) -> str:
    """Before anything changes on the host: reach the target endpoint with the pinned CA, check
    the node-ip, and run `kubeadm join phase preflight` with the real JoinConfiguration. One
    `check NAME: ok|failed WHY` line each; exit 1 when one failed."""
    work = f"/var/lib/joinops/probe-{_script_id(request_id)}"
    ignored = ",".join(IGNORED_PREFLIGHT)
    processes = "|".join(KUBERNETES_PROCESSES)
    return "\n".join(
        [
            "set -u",
            "out=/dev/termination-log; : > $out; rc=0",
            f"install -D -m 0600 /joinops/{JOIN_KEY} /host{work}/{JOIN_KEY}",
            f"install -m 0644 /joinops/{CA_KEY} /host{work}/{CA_KEY}",
            f"trap 'rm -rf /host{work}' EXIT",
            'check() { if [ -z "$2" ]; then echo "check $1: ok" >> $out; '
            'else echo "check $1: failed $2" >> $out; rc=1; fi; }',
            f"err=$(chroot /host curl -sS -o /dev/null --max-time 10 --cacert {work}/{CA_KEY} "
            f'"https://$(cat /joinops/{ENDPOINT_KEY})/livez" 2>&1) && err=""',
            "check endpoint \"$(printf '%s' \"$err\" | tr '\\n' ' ')\"",
            "ips=\" $(chroot /host ip -o addr show | awk '{print $4}' | cut -d/ -f1 | "
            "tr '\\n' ' ')\"",
            'bad=""',
            f"for ip in $(tr ',' ' ' < /joinops/{NODE_IP_KEY}); do "
            'case "$ips" in *" $ip "*) ;; *) bad="$bad $ip";; esac; done',
            'check node-ip "${bad:+node-ip$bad is not an address of this host ($ips)}"',
            f"ignore={ignored}",
            f"for p in $(cat /joinops/{PORTS_KEY}); do "
            'who=$(chroot /host ss -Hltnp "sport = :$p" 2>/dev/null | '
            'sed -n \'s/.*users:(("\\([^"]*\\)".*/\\1/p\' | head -n1); '
            f'case "$who" in {processes}) ignore="$ignore,Port-$p";; '
            # nginx of joinops's VIP layout: the unit stops it between reset and join
            f'nginx) [ -e /host{VIP_MARKER} ] && ignore="$ignore,Port-$p";; esac; done',
            f"err=$(chroot /host kubeadm join phase preflight --config {work}/{JOIN_KEY} "
            '--ignore-preflight-errors="$ignore" 2>&1) && err=""',
            "check preflight \"$(printf '%s' \"$err\" | grep -E 'ERROR|error|found multiple' | "
            "tr '\\n' ' ' | cut -c1-1500)\"",
            "exit $rc",
        ]
    )


def kubeadm_script(request_id: str, namespace: str = "") -> str:
    """`namespace`: the agent's, with return material in the Secret (the unit falls back into
    the source when the target join fails, workers.agent_return); "" without."""
    unit = unit_name(_script_id(request_id))
    if namespace:
        return agent_return.pod_script(request_id, namespace, unit, _deadline_guard())
    return "\n".join(
        [
            "set -eu",
            _deadline_guard(),
            f"install -D -m 0600 /joinops/{JOIN_KEY} /host{HOST_JOIN_FILE}",
            f"chroot /host systemd-run --unit={unit} --collect --property=Type=oneshot "
            f"/bin/sh -c 'kubeadm reset -f && {hostcleanup.shell()} && "
            f"kubeadm join --config {HOST_JOIN_FILE}; rc=$?; "
            f"rm -f {HOST_JOIN_FILE}; exit $rc'",
            "exec sleep infinity  # kubeadm reset stops the kubelet, and this pod with it",
        ]
    )


def ock_script(request_id: str) -> str:
    unit = unit_name(_script_id(request_id))
    dropin = "/host/etc/systemd/system/ocne.service.d"
    return "\n".join(
        [
            "set -eu",
            _deadline_guard(),
            f"install -D -m 0600 /joinops/{JOIN_KEY} /host/etc/kubernetes/kubeadm.conf",
            f"mkdir -p {dropin} /host/etc/ocne",
            f"printf '[Service]\\nEnvironment=ACTION=join\\n' > {dropin}/joinops-action.conf",
            "touch /host/etc/ocne/reset-kubeadm",
            f"chroot /host systemd-run --unit={unit} --collect --property=Type=oneshot "
            "/bin/sh -c 'systemctl daemon-reload && systemctl restart ocne'",
            "exec sleep infinity  # the ocne service resets kubeadm, and this pod goes with it",
        ]
    )


def upload_certs_script(with_config: bool = False) -> str:
    """`with_config`: the cluster's ClusterConfiguration (mounted as KUBEADM_CONFIG_KEY) goes
    to kubeadm as `--config`, so that an external etcd's client certificates are uploaded too
    (kubeadm's copycerts adds them only when the configuration it reads names etcd.external;
    kubeadm's HA guide runs upload-certs with `--config` for that reason)."""
    key = f'--certificate-key "$(cat /joinops/{CERT_KEY})"'
    if not with_config:
        return f"exec chroot /host kubeadm init phase upload-certs --upload-certs {key}"
    return "\n".join(
        [
            "set -u",
            "f=$(chroot /host mktemp /tmp/joinops-kubeadm-XXXXXX.yaml)",
            f'cat /joinops/{KUBEADM_CONFIG_KEY} > "/host$f"',
            f'chroot /host kubeadm init phase upload-certs --upload-certs --config "$f" {key}',
            'rc=$?; rm -f "/host$f"; exit $rc',
        ]
    )


def agent_pod(
    *,
    namespace: str,
    request_id: str,
    node: str,
    image: str,
    profile: str,
    not_after: int,
    returnable: bool = False,
) -> dict[str, Any]:
    """`not_after`: epoch seconds after which the agent, should it start, does nothing.
    `returnable`: the Secret carries return material; the unit falls back on a failed join."""
    if profile == "ock":
        script = ock_script(request_id)
    else:
        script = kubeadm_script(request_id, namespace if returnable else "")
    pod = privileged_pod(
        namespace=namespace,
        name=agent_pod_name(request_id),
        node=node,
        image=image,
        script=script,
        secret_name=join_secret_name(request_id),
        pod_labels=labels(request_id, "agent"),
        host_pid=True,
    )
    pod["spec"]["containers"][0]["env"] = [{"name": NOT_AFTER_ENV, "value": str(not_after)}]
    return pod


def probe_pod(
    *, namespace: str, request_id: str, node: str, image: str, facts: bool
) -> dict[str, Any]:
    """The facts pod (`facts`) or the preflight pod: they read, never change, the host."""
    return privileged_pod(
        namespace=namespace,
        name=facts_pod_name(request_id) if facts else probe_pod_name(request_id),
        node=node,
        image=image,
        script=host_facts_script() if facts else preflight_script(request_id),
        secret_name=None if facts else join_secret_name(request_id),
        pod_labels=labels(request_id, "probe"),
        host_pid=True,
    )


def check_pod(*, namespace: str, request_id: str, node: str, image: str) -> dict[str, Any]:
    """An ordinary pod on the moved node (pod network, no privileges): does a pod run there?"""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": check_pod_name(request_id),
            "namespace": namespace,
            "labels": labels(request_id, "pod-check"),
        },
        "spec": {
            "nodeName": node,
            "restartPolicy": "Never",
            "automountServiceAccountToken": False,
            "terminationGracePeriodSeconds": 0,
            "tolerations": [{"operator": "Exists"}],
            "containers": [  # the pause image's own entrypoint: it waits until deleted
                {
                    "name": "check",
                    "image": image,
                    "resources": {"requests": {"cpu": "1m", "memory": "8Mi"}},
                }
            ],
        },
    }


def upload_certs_pod(
    *, namespace: str, request_id: str, node: str, image: str, with_config: bool = False
) -> dict[str, Any]:
    return privileged_pod(
        namespace=namespace,
        name=upload_pod_name(request_id),
        node=node,
        image=image,
        script=upload_certs_script(with_config),
        secret_name=upload_pod_name(request_id),
        pod_labels=labels(request_id, "upload-certs"),
        host_pid=False,
    )
