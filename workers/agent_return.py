"""The node agent's unit when the node can go back: join the target, or fall back into the source.

The unit (a transient systemd unit on the host, so it outlives the kubelet) runs `kubeadm reset
-f`, cleans the host (workers.hostcleanup) and joins the target. If kubeadm exits with an error,
or the node is not Ready in the target within `timeouts.join` (its own kubelet's credentials ask
the target: its kubelet's client certificate asks `curl` for its own Node, the server read from
kubelet.conf), it writes the decisive mark `abandoned` into the request's record ConfigMap in the
source (`joinops-return-<id>`), as a merge patch carrying the resourceVersion it read: the write
fails if joinops confirmed the join meanwhile (`target-complete`), and then nothing more is done.
Marked, it resets and cleans the host again, reports `returning`, waits for joinops to make way
(the old Node deleted in the source: `way-clear`) and joins the source with the return
JoinConfiguration; `returned` or `return-failed` follows.

Besides kubeadm, coreutils, grep and sed, the unit needs `curl` on the host for all of that. A
host without it (a minimal one may lack it) joins the target as a unit without return material
does, and the journal says so: nothing of a return can be done there.

The record is written with the return bootstrap token (its extra group is bound to a Role on
that ConfigMap alone). Everything the unit reads comes from the mounted Secret; the script holds
only constants, the request id and the agent namespace.
"""

from __future__ import annotations

import re

from workers import hostcleanup

WORK = "/var/lib/joinops"
PHASES = ("reset", "target-joining", "abandoned", "returning", "returned", "return-failed")
COMPLETE = "target-complete"  # written by joinops when it has seen the join complete
WAY_CLEAR = "way-clear"  # written by joinops when the old Node no longer stands in the way
# after the join, the kubelet's own credentials (kubeadm's kubelet.conf points at them); the Node
# authorizer lets a node read its own Node; a kubeadm host need not have kubectl
KUBELET_CERT = "/var/lib/kubelet/pki/kubelet-client-current.pem"
CLUSTER_CA = "/etc/kubernetes/pki/ca.crt"  # written by kubeadm join
KUBELET_CONF = "/etc/kubernetes/kubelet.conf"
NO_CURL = (
    "joinops: no curl on this host: no way back into the source if the join fails; "
    "joining the target only"
)
_NAMESPACE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


def pod_script(request_id: str, namespace: str, unit: str, guard: str) -> str:
    """What the agent pod runs: copy the Secret's files onto the host, start the unit."""
    if not _NAMESPACE.match(namespace):
        raise ValueError(f"not a namespace name, so not put in a script: {namespace!r}")
    work = f"{WORK}/{request_id}"
    script = unit_script(request_id, namespace)
    return "\n".join(
        [
            "set -eu",
            guard,
            f"mkdir -p /host{work} && chmod 0700 /host{work}",
            f'for f in /joinops/*; do install -m 0600 "$f" /host{work}/; done',
            f"cat > /host{work}/unit.sh <<'JOINOPS_UNIT'\n{script}\nJOINOPS_UNIT",
            f"chroot /host systemd-run --unit={unit} --collect --property=Type=oneshot "
            f"/bin/sh {work}/unit.sh",
            "exec sleep infinity  # kubeadm reset stops the kubelet, and this pod with it",
        ]
    )


def unit_script(request_id: str, namespace: str) -> str:
    """What systemd runs with the host's /bin/sh (dash on Debian and Ubuntu): POSIX sh only.
    tests/host runs it; kubesim reads its steps (kubeadm reset before kubeadm join, the record's
    name, the kubelet's certificate)."""
    w = f"{WORK}/{request_id}"
    record = f"/api/v1/namespaces/{namespace}/configmaps/joinops-return-{request_id}"
    api = (
        f'curl -sS --max-time 10 --cacert {w}/source-ca.crt -H "Authorization: Bearer '
        f'$(cat {w}/return-token)" "https://$(cat {w}/source-endpoint){record}"'
    )
    return "\n".join(
        [
            "set -u",
            *_functions(api),
            *_without_curl(w),
            'report reset ""',
            "clean",
            'report target-joining ""',
            f"if out=$(kubeadm join --config {w}/join-config.yaml 2>&1); then",
            f"  end=$(( $(date +%s) + $(cat {w}/join-seconds) )); why=''",
            f"  until {_own_node(w)} 2>/dev/null | tr -d ' \\t\\n' | "
            'grep -q \'"type":"Ready","status":"True"\'; do',
            '    if [ "$(date +%s)" -ge "$end" ]; then why="no Ready within '
            f'$(cat {w}/join-seconds)s"; break; fi; sleep 5; done',
            f'  if [ -z "$why" ]; then rm -rf {w}; exit 0; fi',
            'else why=$(failure "$out"); fi',
            f'abandon "$why" || {{ rm -rf {w}; exit 1; }}',
            "clean",
            'report returning "$why"',
            f"for i in $(seq 1 720); do {api} | grep -q '\"{WAY_CLEAR}\"' && break; sleep 5; done",
            f"if out=$(kubeadm join --config {w}/return-config.yaml 2>&1); then "
            'report returned ""; rc=0; else report return-failed "$(failure "$out")"; rc=1; fi',
            f"rm -rf {w}; exit $rc",
        ]
    )


def _functions(api: str) -> list[str]:
    """The unit's shell functions. `say`: a message as the content of a JSON string: quotes and
    backslashes go, and each run of bytes outside printable ASCII (kubeadm's preflight tabs,
    the newlines between its lines) becomes one space; a real API server refuses a patch with a
    control character in a string. `failure`: kubeadm's error, from its `error ...` line on
    (else its last line), never its last line as such, which is always "To see the stack trace
    of this error execute with --v=5 or higher". `abandon`: the decisive mark, only while
    joinops has not confirmed the join, and only with a resourceVersion read: a patch whose
    resourceVersion is "" is unconditional, so a failed read (a 429, say) must not lead to a
    write over joinops's `target-complete`."""
    patch = "-X PATCH -H 'Content-Type: application/merge-patch+json'"
    return [
        "say() { printf '%s' \"$1\" | LC_ALL=C tr -cs '[:print:]' ' ' | tr -d '\"\\\\' | "
        "cut -c1-900; }",
        "failure() { e=$(printf '%s\\n' \"$1\" | grep -v -e '^To see the stack trace' "
        "-e '^\\[preflight\\] If you know'); printf 'kubeadm: %s' \"$(printf '%s\\n' \"$e\" | "
        "sed -n '/^error/,$p' | grep . || printf '%s\\n' \"$e\" | grep . | tail -n1)\"; }",
        f'report() {{ {api} {patch} -d "{{\\"data\\":{{\\"phase\\":\\"$1\\",'
        f'\\"$1\\":\\"$(say "$2")\\"}}}}" >/dev/null; }}',
        "abandon() { for i in $(seq 1 60); do body=$(" + api + ") || { sleep 5; continue; }; "
        f'case "$body" in *\'"{COMPLETE}"\'*) return 1;; esac; '
        'rv=$(printf \'%s\' "$body" | sed -n \'s/.*"resourceVersion": *"\\([0-9]*\\)".*/\\1/p\''
        ' | head -n1); [ -n "$rv" ] || { sleep 5; continue; }; '
        f"code=$({api} {patch} -o /dev/null -w '%{{http_code}}' -d "
        '"{\\"metadata\\":{\\"resourceVersion\\":\\"$rv\\"},\\"data\\":{\\"phase\\":'
        '\\"abandoned\\",\\"abandoned\\":\\"$(say "$1")\\"}}"); '
        '[ "$code" = 200 ] && return 0; sleep 2; done; return 1; }',
        f"clean() {{ kubeadm reset -f; {hostcleanup.shell()}; }}",
    ]


def _without_curl(w: str) -> list[str]:
    """A host without curl (a minimal one may lack it) cannot write its phases nor ask for its
    Node: it joins the target as the unit without return material does, and says why in the
    journal, rather than retrying a write that cannot happen."""
    return [
        "if ! command -v curl >/dev/null 2>&1; then",
        f'  echo "{NO_CURL}"',
        f"  clean; kubeadm join --config {w}/join-config.yaml; rc=$?; rm -rf {w}; exit $rc",
        "fi",
    ]


def _own_node(w: str) -> str:
    """The node's own Node object from the target, as the kubelet's credentials can read it."""
    server = f"$(sed -n 's/^[[:space:]]*server:[[:space:]]*//p' {KUBELET_CONF} | head -n1)"
    return (
        f"curl -sS --max-time 10 --cacert {CLUSTER_CA} --cert {KUBELET_CERT} "
        f'--key {KUBELET_CERT} "{server}/api/v1/nodes/$(cat {w}/node-name)"'
    )
