"""What the simulated machines do with special pods: upload-certs, and the node agent
that resets a host and joins it to another cluster."""

from __future__ import annotations

import os
import re
import uuid
from typing import TYPE_CHECKING, Any

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from kubesim import node_objects, objects
from kubesim.behaviours import etcdctl, host_probe, host_return, join_preflight
from kubesim.behaviours.agent_pods import (
    CERT_FILES,
    CERTS_SECRET,
    CERTS_TTL,
    HEX64,
    UPLOAD_CERTS,
    agent_problems,
    certificate_key,
    command_lines,
    config_has_external_etcd,
    mounted,
)
from kubesim.behaviours.host_cleanup import (
    cleanup_between_reset_and_join,
    interfaces_deleted,
    units_stopped,
)
from kubesim.behaviours.join_preflight import JoinAttempt
from kubesim.entries import Entry
from kubesim.kubeadm import JoinConfig, find_join_configuration
from kubesim.resources import NODES, PODS, SECRETS

if TYPE_CHECKING:
    from kubesim.hosts import Host
    from kubesim.protocols import SimCluster, SimWorld


class HostAgent:
    def __init__(self, world: SimWorld) -> None:
        self.world = world
        self.refusals = host_return.JoinRefusals()  # targets refusing joins at a phase

    # ---- dispatch from the kubelet -----------------------------------------------------
    def run_special(self, cluster: SimCluster, host: Host, entry: Entry) -> bool:
        """Handle an upload-certs or node-agent pod; False for ordinary pods."""
        pod = entry.obj
        lines = command_lines(pod)
        text = "\n".join(lines)
        if UPLOAD_CERTS in text:
            self._upload_certs(cluster, host, pod, text)
            return True
        if etcdctl.is_etcdctl(text):
            ok, report = etcdctl.answer(cluster, host, text)
            self._run_then_finish(cluster, host, pod, ok, report)
            return True
        if host_probe.PREFLIGHT_MARK in text:
            return self._preflight(cluster, host, pod)
        if host_probe.FACTS_MARK in text and "kubeadm join" not in text:
            return self._facts(cluster, host, pod)
        profile = (
            "kubeadm" if "kubeadm join" in text else "ock" if re.search(r"\bocne\b", text) else ""
        )
        if not profile:
            return False
        return self._agent(cluster, host, pod, profile, text)

    # ---- upload-certs ------------------------------------------------------------------
    def _upload_certs(
        self, cluster: SimCluster, host: Host, pod: dict[str, Any], text: str
    ) -> None:
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        kubelet = self.world.behaviours.kubelet
        failure = self._upload_problem(cluster, host, pod, text)
        if failure:
            kubelet.set_finished(cluster, host, ns, name, False, failure)
            self.world.record_event(cluster.name, "upload-certs-failed", host.name, failure)
            return
        key = certificate_key(cluster, pod, text)
        assert key is not None
        kubelet.set_running(cluster, host, ns, name)
        with_external_etcd = config_has_external_etcd(cluster, pod, text)

        def finish() -> None:
            self._store_certs(cluster, key)
            cluster.uploaded_external_etcd_certs = with_external_etcd
            kubelet.set_finished(cluster, host, ns, name, True)
            self.world.record_event(cluster.name, "certs-uploaded", host.name, key[:8] + "...")

        self.world.schedule(self.world.pod_start_seconds, finish)

    def _upload_problem(
        self, cluster: SimCluster, host: Host, pod: dict[str, Any], text: str
    ) -> str:
        node = cluster.store.get(NODES, "", host.name)
        missing = "open /etc/kubernetes/pki/ca.crt: no such file or directory"
        if node is None or not node_objects.is_control_plane(node.obj):
            return (
                "error execution phase upload-certs: failed to load certificates: couldn't "
                f"load the certificate file /etc/kubernetes/pki/ca.crt: {missing} "
                f"(node {host.name} is not a control-plane node)"
            )
        if "--upload-certs" not in text.split():
            return "error execution phase upload-certs: --upload-certs was not given"
        key = certificate_key(cluster, pod, text)
        if key is None:
            return "error execution phase upload-certs: --certificate-key is required"
        if not HEX64.match(key):
            return (
                "error execution phase upload-certs: error uploading certs: error decoding "
                f"certificate key: the certificate key {key[:12]!r}... is not 32 bytes of hex"
            )
        problems = [
            p
            for p in agent_problems(pod)
            if p not in ("no hostPID", "does not tolerate every taint (operator: Exists)")
        ]
        if problems:
            return (
                "error execution phase upload-certs: failed to load certificates: "
                f"{missing} ({', '.join(problems)})"
            )
        return ""

    def _store_certs(self, cluster: SimCluster, key: str) -> None:
        aead = AESGCM(bytes.fromhex(key))
        contents = {f: os.urandom(64) for f in CERT_FILES}
        contents["ca.crt"] = cluster.ca.cert_pem
        contents["ca.key"] = cluster.ca.key_pem
        data = {}
        for file, content in contents.items():
            nonce = os.urandom(12)
            data[file] = nonce + aead.encrypt(nonce, content, None)
        obj = objects.secret_object("kube-system", CERTS_SECRET, data)
        existing = cluster.store.get(SECRETS, "kube-system", CERTS_SECRET)
        if existing is None:
            cluster.store.create(SECRETS, obj)
        else:
            updated = existing.copy()
            updated["data"] = obj["data"]
            cluster.store.put(SECRETS, updated)
        expiry = self.world.clock.time() + CERTS_TTL
        cluster.uploaded_cert_keys.clear()  # a new upload re-encrypts: older keys stop working
        cluster.uploaded_cert_keys[key] = expiry
        self.world.schedule(CERTS_TTL, lambda: self.expire_certs(cluster))

    def expire_certs(self, cluster: SimCluster) -> None:
        """kubeadm-certs goes with its two-hour proxy token."""
        now = self.world.clock.time()
        with cluster.lock:
            for key, expiry in list(cluster.uploaded_cert_keys.items()):
                if expiry <= now:
                    del cluster.uploaded_cert_keys[key]
                    if cluster.store.get(SECRETS, "kube-system", CERTS_SECRET) is not None:
                        cluster.store.remove(SECRETS, "kube-system", CERTS_SECRET)

    # ---- probes (kubesim.behaviours.host_probe) -----------------------------------------
    def _facts(self, cluster: SimCluster, host: Host, pod: dict[str, Any]) -> bool:
        report = host_probe.facts_report(host)
        self._run_then_finish(cluster, host, pod, True, report)
        return True

    def _preflight(self, cluster: SimCluster, host: Host, pod: dict[str, Any]) -> bool:
        config = self._join_config(cluster, pod)
        if config is None:
            ok, report = False, "check preflight: failed no kubeadm JoinConfiguration mounted"
        else:
            script = "\n".join(command_lines(pod))
            ok, report = host_probe.preflight_report(self.world, host, config, script)
        self._run_then_finish(cluster, host, pod, ok, report)
        return True

    def _run_then_finish(
        self, cluster: SimCluster, host: Host, pod: dict[str, Any], ok: bool, report: str
    ) -> None:
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        kubelet = self.world.behaviours.kubelet
        kubelet.set_running(cluster, host, ns, name)
        self.world.schedule(
            self.world.pod_start_seconds,
            lambda: kubelet.set_finished(cluster, host, ns, name, ok, report),
        )

    # ---- node agent --------------------------------------------------------------------
    def _agent(
        self, cluster: SimCluster, host: Host, pod: dict[str, Any], profile: str, text: str
    ) -> bool:
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        kubelet = self.world.behaviours.kubelet
        problems = agent_problems(pod)
        config = self._join_config(cluster, pod)
        if config is None:
            problems.append("no mounted Secret holds a kubeadm JoinConfiguration")
        if problems:
            reason = f"agent pod {ns}/{name} cannot act on the host: {'; '.join(problems)}"
            kubelet.set_finished(cluster, host, ns, name, False, reason)
            self.world.record_join_failure(host.name, reason)
            return True
        assert config is not None
        late = self._started_late(cluster, pod)
        if late:
            # the agent's script checks its deadline before it touches the host
            kubelet.set_finished(cluster, host, ns, name, False, late)
            self.world.record_event(cluster.name, "agent-late", host.name, late)
            return True
        kubelet.set_running(cluster, host, ns, name)
        cleanup = cleanup_between_reset_and_join(text) if profile == "kubeadm" else []
        unit = text if profile == "kubeadm" else ""
        back = host_return.way_back(cluster, pod, text) if profile == "kubeadm" else None
        attempt = JoinAttempt(host, cluster.name, config, profile, cleanup, unit, back)
        self.world.schedule(self.world.pod_start_seconds, lambda: self.reset(cluster, attempt))
        return True

    def _started_late(self, cluster: SimCluster, pod: dict[str, Any]) -> str:
        """The script's first line: a `JOINOPS_NOT_AFTER` (epoch seconds, in its environment)
        that has passed means joinops gave this agent up; it exits without touching the host."""
        env = [
            e
            for c in pod.get("spec", {}).get("containers") or []
            for e in c.get("env") or []
            if e.get("name") == "JOINOPS_NOT_AFTER"
        ]
        if not env or float(env[0].get("value") or 0) >= self.world.clock.time():
            return ""
        return "joinops: not started: the node agent started after its deadline; nothing done"

    def _join_config(self, cluster: SimCluster, pod: dict[str, Any]) -> JoinConfig | None:
        ns = pod["metadata"]["namespace"]
        for volume in pod.get("spec", {}).get("volumes") or []:
            secret_name = (volume.get("secret") or {}).get("secretName")
            if not secret_name or not mounted(pod, volume.get("name", "")):
                continue
            secret = cluster.store.get(SECRETS, ns, secret_name)
            if secret is None:
                continue
            for text in objects.secret_values(secret.obj).values():
                config = find_join_configuration(text)
                if config is not None:
                    return config
        return None

    def reset(self, cluster: SimCluster, attempt: JoinAttempt) -> None:
        """``kubeadm reset -f``: the kubelet stops, the pods go, the Node object stays."""
        host = attempt.host
        if host.cluster != cluster.name or not host.kubelet_running:
            return
        with cluster.lock:
            others = [
                n
                for n in cluster.control_plane_nodes()
                if n != host.name
                and (h := cluster.hosts.get(n)) is not None
                and h.cluster == cluster.name
            ]
            was_control_plane = host.role == "control-plane"
            if was_control_plane and others:
                self._remove_etcd_member(cluster, host)
            host.kubelet_running = False
            host.cluster = None
            host.kubelet_flags = {}  # reset empties /var/lib/kubelet, kubeadm-flags.env too
            host.boot_id = str(uuid.uuid4())
            cluster.hosts.pop(host.name, None)
            cluster.set_node_state(host.name, "unknown")
            for entry in cluster.store.list(PODS):
                if entry.obj.get("spec", {}).get("nodeName") == host.name:
                    cluster.store.remove(PODS, entry.meta["namespace"], entry.meta["name"])
            self.world.record_event(cluster.name, "host-reset", host.name, attempt.profile)
            for what in attempt.cleanup:
                if what in host.leftovers:
                    host.leftovers.remove(what)
                    host.cleaned.append(what)
            for interface in interfaces_deleted(attempt.unit, list(host.interfaces)):
                del host.interfaces[interface]
                host.cleaned.append(f"interface {interface}")
            for unit in units_stopped(attempt.unit, host.files, host.units):
                host.units[unit] = "disabled"  # stopped now, not started at the next boot
                host.cleaned.append(f"unit {unit}")
            if was_control_plane and not others:
                cluster.destroy()
        self.world.after_reset(lambda: self.join(attempt))

    def _remove_etcd_member(self, cluster: SimCluster, host: Host) -> None:
        """kubeadm reset's remove-etcd-member phase (cmd/kubeadm/app/cmd/phases/reset/
        removeetcdmember.go): it removes the member only when the host's admin.conf can read
        kubeadm-config; otherwise, or when etcd refuses (no quorum), it only warns. Either way
        the data directory is wiped: a member left behind is dead."""
        member = cluster.etcd.named(host.name)
        if member is None:
            return
        why = (
            "Unable to fetch the kubeadm-config ConfigMap from cluster"
            if host.admin_conf_expired
            else cluster.etcd.remove(member.id)
        )
        if why:
            member.healthy = False
            self.world.record_event(cluster.name, "etcd-member-left", host.name, why)

    def join(self, attempt: JoinAttempt) -> None:
        """``kubeadm join``: register in the target if the join material is valid there."""
        target, reason = join_preflight.check(self.world, attempt)
        host = attempt.host
        if target is not None:
            reason = self.refusals.before_registration(target, attempt.config.endpoint)
            target = None if reason else target
        if target is None:
            self.world.record_join_failure(host.name, reason)
            self._fall_back(attempt, None, f"kubeadm: {reason}")
            return
        refused = self.refusals.at.get(target.name, "")
        etcd_refused = refused == "etcd-member-add" and attempt.config.control_plane
        host.never_ready = refused == "ready"
        self._register(
            target, attempt, control_plane=attempt.config.control_plane and not etcd_refused
        )
        if etcd_refused:  # the node turned Ready, then etcd refused the member: kubeadm exits
            self.world.schedule(
                self.world.node_ready_seconds + 0.05, lambda: self._etcd_refused(attempt, target)
            )
        elif attempt.back is not None:
            self.world.schedule(
                attempt.back.join_seconds, lambda: self._ready_deadline(attempt, target)
            )

    def _register(self, target: SimCluster, attempt: JoinAttempt, control_plane: bool) -> None:
        host, config = attempt.host, attempt.config
        host.kubelet_flags = {  # kubeadm join writes kubeadm-flags.env anew
            "container-runtime-endpoint": config.cri_socket or host.runtime_sockets[0],
            **config.kubelet_extra_args,
        }
        node_ip = config.kubelet_extra_args.get("node-ip", "").split(",")[0].strip()
        host.internal_ip = node_ip or host.addresses[0]  # the kubelet's own choice otherwise
        with target.lock:
            existing = target.store.get(NODES, "", host.name)
            if existing is not None:
                target.store.remove(NODES, "", host.name)  # a NotReady leftover is re-registered
            target.register_host(host, control_plane, attempt.config.taints)
        self.world.record_event(
            target.name,
            "host-joined",
            host.name,
            "control-plane" if attempt.config.control_plane else "worker",
        )

    # ---- the way back (kubesim.behaviours.host_return) ----------------------------------
    def _etcd_refused(self, attempt: JoinAttempt, target: SimCluster) -> None:
        why = host_return.REFUSALS["etcd-member-add"]
        self.world.record_join_failure(attempt.host.name, why)
        self._fall_back(attempt, target, f"kubeadm: {why}")

    def _ready_deadline(self, attempt: JoinAttempt, target: SimCluster) -> None:
        """The unit's wait for Ready in the target (with its kubelet's credentials) ends."""
        assert attempt.back is not None
        node = target.store.get(NODES, "", attempt.host.name)
        ready = node is not None and node_objects.node_state(node.obj) == "ready"
        if ready and attempt.back.ready_check_works:
            return
        why = f"no Ready within {int(attempt.back.join_seconds)}s"
        self._fall_back(attempt, target, why)

    def _fall_back(self, attempt: JoinAttempt, target: SimCluster | None, why: str) -> None:
        back = attempt.back
        if back is None or not host_return.abandon(self.world, back, why):
            return  # no way back, or joinops confirmed the join first
        attempt.host.never_ready = False
        host_return.leave(self.world, attempt, target)
        host_return.report(back, "returning", why)
        self._await_way(attempt)

    def _await_way(self, attempt: JoinAttempt) -> None:
        back = attempt.back
        assert back is not None
        data = host_return.record_data(back)
        if not data:
            return  # the record is gone: joinops gave the request up
        if host_return.WAY_CLEAR not in data:
            self.world.schedule(0.05, lambda: self._await_way(attempt))
            return
        self.world.after_reset(lambda: self._join_home(attempt))  # kubeadm join takes its time

    def _join_home(self, attempt: JoinAttempt) -> None:
        back = attempt.back
        assert back is not None
        home = JoinAttempt(attempt.host, "", back.config, attempt.profile, [])
        source, reason = join_preflight.check(self.world, home)
        if source is None:
            self.world.record_join_failure(attempt.host.name, reason)
            host_return.report(back, "return-failed", f"kubeadm: {reason}")
            return
        self._register(source, home, control_plane=back.config.control_plane)
        host_return.report(back, "returned")
