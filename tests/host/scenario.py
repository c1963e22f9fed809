"""A worker host in the source, as the node agent leaves it before its unit starts.

The agent pod copied the join Secret's files into /var/lib/joinops/<id>/ (unit.sh among them,
workers/agent_return.pod_script); the host is joined to the source (its kubelet.conf, CA and
kubelet client certificate) and carries what `kubeadm reset` leaves behind (a CNI conflist, CNI
state, kube-proxy's iptables chains, a flannel interface, root's kubeconfig). The source holds
the request's record ConfigMap, readable and patchable by the return token alone, and the
node's Ready Node; the target holds nothing of the node yet.
"""

from __future__ import annotations

from typing import Any

from tests.host import apiserver
from tests.host.hostns import Host
from workers import agent_return

ID = "req-0123abcd"
NAMESPACE = "joinops-system"
NODE = "node-1"
WORK = f"/var/lib/joinops/{ID}"
RECORD = f"joinops-return-{ID}"
SOURCE, TARGET = "10.0.0.10:6443", "10.0.0.20:6443"
SOURCE_CA = "-----BEGIN CERTIFICATE-----\nsource CA\n-----END CERTIFICATE-----\n"
TARGET_CA = "-----BEGIN CERTIFICATE-----\ntarget CA\n-----END CERTIFICATE-----\n"
RETURN_TOKEN = "abcdef.0123456789abcdef"
TOKEN_USER = "system:bootstrap:abcdef"
INTERFACES = ("lo", "eth0", "cni0", "flannel.1")
RULES = (
    "*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n"
    "-A PREROUTING -m comment --comment kubernetes -j KUBE-SERVICES\n"
    "-A POSTROUTING -s 10.244.0.0/16 -j MASQUERADE\nCOMMIT\n"
)


def join_config(endpoint: str) -> str:
    return (
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\ndiscovery:\n"
        f"  bootstrapToken:\n    apiServerEndpoint: {endpoint}\n"
        "    token: bbbbbb.bbbbbbbbbbbbbbbb\n    caCertHashes:\n    - sha256:00\n"
        f"nodeRegistration:\n  name: {NODE}\n"
    )


def source_host(host: Host, *, join_seconds: int = 300) -> Host:
    """The host as the agent pod leaves it, its unit script at WORK/unit.sh."""
    secret = {
        "join-config.yaml": join_config(TARGET),
        "return-config.yaml": join_config(SOURCE),
        "source-ca.crt": SOURCE_CA,
        "source-endpoint": SOURCE,
        "return-token": RETURN_TOKEN,
        "node-name": NODE,
        "join-seconds": str(join_seconds),
        "unit.sh": agent_return.unit_script(ID, NAMESPACE) + "\n",
    }
    for name, text in secret.items():
        host.write(f"{WORK}/{name}", text)
    host.path(WORK).chmod(0o700)
    leftovers = {
        "/etc/kubernetes/kubelet.conf": f"clusters:\n- cluster:\n    server: https://{SOURCE}\n",
        "/etc/kubernetes/pki/ca.crt": SOURCE_CA,
        "/var/lib/kubelet/pki/kubelet-client-current.pem": f"CERTIFICATE system:node:{NODE}\n",
        "/etc/cni/net.d/10-flannel.conflist": '{"name": "cbr0"}',
        "/var/lib/cni/networks/cbr0/10.244.1.5": "pod",
        "/root/.kube/config": "admin credentials of the source",
    }
    for path, text in leftovers.items():
        host.write(path, text)
    host.fake_file("iptables.rules").write_text(RULES)
    host.state = clusters()
    return host


def clusters() -> dict[str, Any]:
    """The two API servers. The worker (`joinops`) writes way-clear, having deleted the old
    Node, on the unit's second read of its record after it reported `returning`."""
    state: dict[str, Any] = {
        "rv": 1000,
        "joins": [],
        "join_failures": [],
        "requests": [],
        "throttle": [],
        "meanwhile": [],
        "joinops": [
            {"phase": "returning", "reads": 2, "data": {"way-clear": "true"}, "delete_node": NODE}
        ],
    }
    record = {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {
            "name": RECORD,
            "namespace": NAMESPACE,
            "uid": "5d1c0a4e-record",
            "resourceVersion": "1000",
            "creationTimestamp": apiserver.TIME,
        },
        "data": {"phase": "prepared", "was": '{"labels": {"team": "blue"}, "taints": []}'},
    }
    state["clusters"] = {
        SOURCE: {
            "name": "source",
            "ca": SOURCE_CA,
            "tokens": {RETURN_TOKEN: TOKEN_USER},
            "grants": {TOKEN_USER: [f"{NAMESPACE}/{RECORD}"]},
            "configmaps": {f"{NAMESPACE}/{RECORD}": record},
            "nodes": {NODE: apiserver.node(state, NODE, True)},
        },
        TARGET: {
            "name": "target",
            "ca": TARGET_CA,
            "tokens": {},
            "grants": {},
            "configmaps": {},
            "nodes": {},
        },
    }
    return state


def record(host: Host) -> dict[str, str]:
    found = host.state["clusters"][SOURCE]["configmaps"][f"{NAMESPACE}/{RECORD}"]
    return dict(found["data"])


def phases(host: Host) -> list[str]:
    """The phases the unit wrote into its record, in order (the patches the API took)."""
    return [
        r["body"]["data"]["phase"]
        for r in host.state["requests"]
        if r["method"] == "PATCH" and r["status"] == 200
    ]


def abandon_patches(host: Host) -> list[dict[str, Any]]:
    return [
        r
        for r in host.state["requests"]
        if r["method"] == "PATCH" and "abandoned" in str(r["body"])
    ]


def kubeadm_joins(host: Host) -> list[str]:
    """The JoinConfigurations kubeadm was run with, `reset` for each reset, in order."""
    return [c[2] if c[0] == "join" else c[0] for c in host.calls("kubeadm")]


def with_state(host: Host, **changes: Any) -> None:
    state = host.state
    state.update(changes)
    host.state = state
