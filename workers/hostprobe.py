"""Reading the host before anything is changed on it: the facts pod and the preflight pod.

Both are short-lived privileged pods on the node, in the source (workers/agent.py has their
scripts). Each must start within `timeouts.agent_start` (a pod that cannot start — an image it
cannot pull, a node that is NotReady — is deleted and said so: nothing ran on the host) and end
within `timeouts.probe`. What they find comes back as their termination message, one
`key: value` line each.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from joinops.clusters import hostpods, podstatus, watches
from joinops.clusters.kube import KubeCluster
from joinops.errors import ClusterNotFound
from joinops.requests import host_texts
from workers import agent
from workers.errors import PermanentError
from workers.run import Run

# kubelet flags kubeadm writes itself or that belong to the old cluster: never carried over
NOT_CARRIED = frozenset(
    {
        "container-runtime-endpoint",  # carried as nodeRegistration.criSocket instead
        "pod-infra-container-image",  # the target's kubeadm chooses its own pause image
        "bootstrap-kubeconfig",
        "kubeconfig",
        "config",
        "hostname-override",  # the node keeps its name: nodeRegistration.name says it
        "node-labels",  # labels are the target's (or carried by the labels option)
        "register-with-taints",
    }
)
STARTED_PHASES = ("Running", "Succeeded", "Failed")
ENDED_PHASES = ("Succeeded", "Failed")


class NeverStarted(PermanentError):
    """A pod of joinops's did not start on the node in time: `why` is the kubelet's reason."""

    def __init__(self, message: str, why: str) -> None:
        super().__init__(message)
        self.why = why


@dataclass(frozen=True)
class HostFacts:
    kubelet_flags: dict[str, str] = field(default_factory=dict)
    cri_sockets: tuple[str, ...] = ()
    cgroup_driver: str = "unknown"
    addresses: tuple[str, ...] = ()

    @property
    def kept_flags(self) -> dict[str, str]:
        """The flags the JoinConfiguration carries as `kubeletExtraArgs`."""
        return {k: v for k, v in self.kubelet_flags.items() if k not in NOT_CARRIED}

    @property
    def cri_socket(self) -> str:
        """The kubelet's own runtime endpoint; else the only socket there; else ""."""
        own = self.kubelet_flags.get("container-runtime-endpoint", "")
        return own or (self.cri_sockets[0] if len(self.cri_sockets) == 1 else "")

    def as_memory(self) -> dict[str, Any]:
        return {
            "kubelet_flags": self.kubelet_flags,
            "cri_sockets": list(self.cri_sockets),
            "cgroup_driver": self.cgroup_driver,
            "addresses": list(self.addresses),
        }

    @classmethod
    def from_memory(cls, data: dict[str, Any]) -> HostFacts:
        return cls(
            dict(data.get("kubelet_flags") or {}),
            tuple(data.get("cri_sockets") or ()),
            str(data.get("cgroup_driver") or "unknown"),
            tuple(data.get("addresses") or ()),
        )


def parse_report(text: str) -> dict[str, str]:
    report = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            report[key.strip()] = value.strip()
    return report


def parse_flags(text: str) -> dict[str, str]:
    """`--a=b --c d --e` as kubeadm-flags.env holds them (shell words)."""
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    flags: dict[str, str] = {}
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if not word.startswith("--"):
            continue
        name, sep, value = word[2:].partition("=")
        if not sep and i < len(words) and not words[i].startswith("--"):
            value, i = words[i], i + 1
        flags[name] = value
    return flags


def read_host_facts(run: Run) -> HostFacts:
    """The facts pod's report (the pod is deleted afterwards)."""
    phase, message = run_pod(run, facts=True)
    if phase != "Succeeded":
        raise PermanentError(host_texts.host_facts_failed(run.request.node, message or phase))
    report = parse_report(message)
    return HostFacts(
        kubelet_flags=parse_flags(report.get("kubeadm-flags", "")),
        cri_sockets=tuple(report.get("cri-sockets", "").split()),
        cgroup_driver=report.get("cgroup-driver", "unknown") or "unknown",
        addresses=tuple(report.get("addresses", "").split()),
    )


def preflight_failures(run: Run) -> list[tuple[str, str]]:
    """(check, why) for each check of the preflight pod that failed; [] when all passed."""
    phase, message = run_pod(run, facts=False)
    failures = []
    for line in message.splitlines():
        name, _, result = line.removeprefix("check ").partition(":")
        result = result.strip()
        if line.startswith("check ") and result.startswith("failed"):
            failures.append((name.strip(), result.removeprefix("failed").strip()))
    if phase != "Succeeded" and not failures:
        failures.append(("preflight", message or f"the probe pod ended {phase}"))
    return failures


def run_pod(run: Run, *, facts: bool) -> tuple[str, str]:
    """Create the pod, await its start and its end; (phase, termination message)."""
    source, timeouts, clock = run.source, run.ctx.settings.timeouts, run.ctx.clock
    pod = agent.probe_pod(
        namespace=run.namespace,
        request_id=run.id,
        node=run.request.node,
        image=run.ctx.settings.agent.image,
        facts=facts,
    )
    name = pod["metadata"]["name"]
    created = hostpods.create_pod(source, run.namespace, pod)  # an interrupted run's is replaced
    try:
        what = "host probe" if not facts else "host facts probe"
        start_by = clock() + timeouts.agent_start.total_seconds()
        through = _Through(clock, start_by, timeouts.probe.total_seconds())
        started = await_start(
            source, run.namespace, name, start_by, run, what, since=created, until=through
        )
        if started is None:
            return "deleted", "the probe pod was deleted before it ended"
        return _await_end(source, run.namespace, started, through.end_by(), run)
    finally:
        hostpods.delete_pod(source, run.namespace, name)


class _Through:
    """What the wait for a probe pod's start waits for: its end, so that one watch usually
    sees the pod from its creation to its end (each watch ended early costs a connection).
    It stops at the start, as a wait for the start alone would, when the end's deadline
    (`timeouts.probe` from the start) would come before the start's: the end is then awaited
    on its own deadline. Either way the deadlines are those of a start, then an end."""

    def __init__(self, clock: Callable[[], float], start_by: float, probe_seconds: float) -> None:
        self.clock, self.start_by, self.probe_seconds = clock, start_by, probe_seconds
        self.running_since: float | None = None  # when the pod was first seen running

    def __call__(self, pod: Any) -> bool:
        phase = pod.status.phase if pod.status else None
        if phase in ENDED_PHASES:
            return True
        if phase != "Running":
            return False
        if self.running_since is None:
            self.running_since = self.clock()
        return self.running_since + self.probe_seconds < self.start_by

    def end_by(self) -> float:
        """The end's deadline: `timeouts.probe` after the pod was seen to start."""
        since = self.running_since if self.running_since is not None else self.clock()
        return since + self.probe_seconds


def await_start(
    cluster: KubeCluster,
    namespace: str,
    name: str,
    deadline: float,
    run: Run,
    what: str,
    since: str = "",
    until: Callable[[Any], bool] | None = None,
) -> Any:
    """The pod once it runs (or ran); `NeverStarted`, with the kubelet's reason, when it is
    still Pending at the deadline (the caller deletes it). None when the pod is gone (the
    wait's first list finds it gone as a GET would: no GET before it). `since`: the pod's
    resourceVersion as the caller created it: the wait watches from there, without a list.
    `until`: what ends the wait before the deadline (a started pod may go on being watched:
    `_Through`); by default, the start."""
    started = watches.wait_for(
        cluster,
        f"pods/{name}",
        cluster.core.list_namespaced_pod,
        namespace,
        matches=until or (lambda p: bool(p.status and p.status.phase in STARTED_PHASES)),
        deadline=deadline,
        clock=run.ctx.clock,
        deletion_ends=True,
        since=since,
        field_selector=f"metadata.name={name}",
    )
    if started is not None and started.status and started.status.phase in STARTED_PHASES:
        return started
    pod = get_pod(cluster, namespace, name)
    if pod is None:
        return None
    if pod.status and pod.status.phase in STARTED_PHASES:
        return pod
    why = podstatus.waiting_reason(pod)
    within = run.ctx.settings.timeouts.agent_start
    raise NeverStarted(host_texts.never_started(run.request.node, what, within, why), why)


def _await_end(
    cluster: KubeCluster, namespace: str, started: Any, deadline: float, run: Run
) -> tuple[str, str]:
    """(phase, termination message) of the pod once it ended, as the kubelet reported it in
    the status that ended it; ("timed out", what it says now) at the deadline. A pod seen
    ended already is not read again; one seen running is watched from where it was seen."""
    name = started.metadata.name
    ended = started if started.status.phase in ENDED_PHASES else None
    if ended is None:
        ended = watches.wait_for(
            cluster,
            f"pods/{name}",
            cluster.core.list_namespaced_pod,
            namespace,
            matches=lambda p: bool(p.status and p.status.phase in ENDED_PHASES),
            deadline=deadline,
            clock=run.ctx.clock,
            since=started.metadata.resource_version,
            field_selector=f"metadata.name={name}",
        )
    if ended is None:
        return "timed out", podstatus.termination_message(get_pod(cluster, namespace, name))
    return str(ended.status.phase), podstatus.termination_message(ended)


def get_pod(cluster: KubeCluster, namespace: str, name: str) -> Any:
    try:
        return cluster.call(
            "get", f"pods/{name}", cluster.core.read_namespaced_pod, name, namespace
        )
    except ClusterNotFound:
        return None


def probe(run: Run) -> str:
    """The probe step: can this host join the target, checked from the host itself before
    anything is changed on it (before the cordon, so a host that cannot join costs no drain)."""
    failures = preflight_failures(run)
    if failures:
        raise PermanentError(
            host_texts.probe_failed(run.request.node, run.request.target, failures)
        )
    kept = HostFacts.from_memory(run.memory("join-material").get("host") or {}).kept_flags
    return host_texts.probe_passed(run.request.node, run.request.target, sorted(kept))
