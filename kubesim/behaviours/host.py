"""What the simulated machines do with special pods: upload-certs, and the node agent
that resets a host and joins it to another cluster."""

from __future__ import annotations

import base64
import os
import re
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import yaml
from cryptography import x509
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.serialization import Encoding

from kubesim import node_objects, objects
from kubesim.behaviours.host_cleanup import cleanup_between_reset_and_join
from kubesim.behaviours.signer import JWS_PREFIX, TOKEN_PREFIX, TOKEN_RE, expired, token_fields
from kubesim.jws import verify_detached
from kubesim.kubeadm import JoinConfig, find_join_configuration, normalise_endpoint
from kubesim.node_objects import node_state
from kubesim.objects import parse_version
from kubesim.pki import ca_cert_hash
from kubesim.resources import CONFIGMAPS, NODES, PODS, SECRETS
from kubesim.store import Entry

if TYPE_CHECKING:
    from kubesim.hosts import Host
    from kubesim.protocols import SimCluster, SimWorld

UPLOAD_CERTS = "kubeadm init phase upload-certs"
CERTS_SECRET = "kubeadm-certs"
CERTS_TTL = 2 * 3600.0
KEY_RE = re.compile(r"--certificate-key(?:=|\s+)(\S+)")
# A key the shell reads from a file, as in --certificate-key "$(cat /path/key)".
KEY_FILE_RE = re.compile(r"--certificate-key(?:=|\s+)\"?\$\(cat\s+([^)\"\s]+)\)\"?")
HEX64 = re.compile(r"^[0-9a-f]{64}$")
CERT_FILES = (
    "ca.crt",
    "ca.key",
    "etcd-ca.crt",
    "etcd-ca.key",
    "front-proxy-ca.crt",
    "front-proxy-ca.key",
    "sa.key",
    "sa.pub",
)


def cluster_info_ca_hashes(kubeconfig: str) -> list[str]:
    """The `sha256:` pins of every CA certificate in cluster-info's kubeconfig."""
    try:
        doc = yaml.safe_load(kubeconfig)
        data = doc["clusters"][0]["cluster"]["certificate-authority-data"]
        certs = x509.load_pem_x509_certificates(base64.b64decode(data))
    except (yaml.YAMLError, KeyError, IndexError, TypeError, ValueError):
        return []
    return [ca_cert_hash(cert.public_bytes(Encoding.PEM)) for cert in certs]


def command_lines(pod: dict[str, Any]) -> list[str]:
    spec = pod.get("spec", {})
    lines = []
    for container in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        words = [str(w) for w in (container.get("command") or []) + (container.get("args") or [])]
        lines.append(" ".join(words))
    return lines


def certificate_key(cluster: SimCluster, pod: dict[str, Any], text: str) -> str | None:
    """The --certificate-key value as the host's shell sees it: literal, or read with
    `$(cat FILE)` from a Secret mounted into the pod."""
    from_file = KEY_FILE_RE.search(text)
    if from_file is None:
        match = KEY_RE.search(text)
        return match.group(1) if match else None
    path = from_file.group(1)
    spec = pod.get("spec", {})
    volumes = {v.get("name"): v for v in spec.get("volumes") or []}
    for container in spec.get("containers") or []:
        for mount in container.get("volumeMounts") or []:
            root = mount.get("mountPath", "").rstrip("/") + "/"
            secret = (volumes.get(mount.get("name")) or {}).get("secret")
            if secret and path.startswith(root):
                values = cluster.secret_values(
                    pod["metadata"]["namespace"], secret.get("secretName", "")
                )
                return (values or {}).get(path[len(root) :], "").strip() or None
    return None


def _mounted(pod: dict[str, Any], volume_name: str) -> bool:
    for container in pod.get("spec", {}).get("containers") or []:
        if any(m.get("name") == volume_name for m in container.get("volumeMounts") or []):
            return True
    return False


def host_root_mounted(pod: dict[str, Any]) -> bool:
    for volume in pod.get("spec", {}).get("volumes") or []:
        path = (volume.get("hostPath") or {}).get("path", "")
        if (
            path.rstrip("/") == ""
            and "hostPath" in volume
            and _mounted(pod, volume.get("name", ""))
        ):
            return True
    return False


def privileged(pod: dict[str, Any]) -> bool:
    return any(
        (c.get("securityContext") or {}).get("privileged") is True
        for c in pod.get("spec", {}).get("containers") or []
    )


def tolerates_everything(pod: dict[str, Any]) -> bool:
    return any(
        t.get("operator") == "Exists" and not t.get("key") and not t.get("effect")
        for t in pod.get("spec", {}).get("tolerations") or []
    )


def agent_problems(pod: dict[str, Any]) -> list[str]:
    """What a node agent pod lacks to act on its host (empty: it can)."""
    spec = pod.get("spec", {})
    problems = []
    if not privileged(pod):
        problems.append("not privileged")
    if not spec.get("hostPID"):
        problems.append("no hostPID")
    if not spec.get("hostNetwork"):
        problems.append("no hostNetwork")
    if not host_root_mounted(pod):
        problems.append("the host's / is not mounted")
    if not tolerates_everything(pod):
        problems.append("does not tolerate every taint (operator: Exists)")
    return problems


@dataclass
class JoinAttempt:
    host: Host
    source: str
    config: JoinConfig
    profile: str  # kubeadm or ock
    cleanup: list[str]  # what the unit removes between reset and join


class HostAgent:
    def __init__(self, world: SimWorld) -> None:
        self.world = world

    # ---- dispatch from the kubelet -----------------------------------------------------
    def run_special(self, cluster: SimCluster, host: Host, entry: Entry) -> bool:
        """Handle an upload-certs or node-agent pod; False for ordinary pods."""
        pod = entry.obj
        lines = command_lines(pod)
        text = "\n".join(lines)
        if UPLOAD_CERTS in text:
            self._upload_certs(cluster, host, pod, text)
            return True
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

        def finish() -> None:
            self._store_certs(cluster, key)
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
        kubelet.set_running(cluster, host, ns, name)
        cleanup = cleanup_between_reset_and_join(text) if profile == "kubeadm" else []
        attempt = JoinAttempt(host, cluster.name, config, profile, cleanup)
        self.world.schedule(self.world.pod_start_seconds, lambda: self.reset(cluster, attempt))
        return True

    def _join_config(self, cluster: SimCluster, pod: dict[str, Any]) -> JoinConfig | None:
        ns = pod["metadata"]["namespace"]
        for volume in pod.get("spec", {}).get("volumes") or []:
            secret_name = (volume.get("secret") or {}).get("secretName")
            if not secret_name or not _mounted(pod, volume.get("name", "")):
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
            host.kubelet_running = False
            host.cluster = None
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
            if was_control_plane and not others:
                cluster.destroy()
        self.world.schedule(self.world.join_seconds, lambda: self.join(attempt))

    def join(self, attempt: JoinAttempt) -> None:
        """``kubeadm join``: register in the target if the join material is valid there."""
        target, reason = self.check(attempt)
        host = attempt.host
        if target is None:
            self.world.record_join_failure(host.name, reason)
            return
        with target.lock:
            existing = target.store.get(NODES, "", host.name)
            if existing is not None:
                target.store.remove(NODES, "", host.name)  # a NotReady leftover is re-registered
            target.register_host(host, attempt.config.control_plane)
        self.world.record_event(
            target.name,
            "host-joined",
            host.name,
            "control-plane" if attempt.config.control_plane else "worker",
        )

    def check(self, attempt: JoinAttempt) -> tuple[SimCluster | None, str]:
        """(target, "") when the join would succeed, else (None, why)."""
        cfg, host = attempt.config, attempt.host
        parsed = normalise_endpoint(cfg.endpoint)
        if parsed is None:
            return None, f"discovery: invalid apiServerEndpoint {cfg.endpoint!r}"
        target = self.world.cluster_at(*parsed)
        if target is None or not target.reachable:
            return None, (
                f"couldn't get cluster-info from https://{cfg.endpoint}: dial tcp "
                f"{cfg.endpoint}: connect: connection refused"
            )
        with target.lock:
            reason = (
                self._check_discovery(target, cfg)
                or self._check_version(target, cfg, host)
                or self._check_name(target, cfg, host)
                or (self._check_control_plane(target, cfg) if cfg.control_plane else "")
                or self._check_tls_bootstrap(target, cfg)
            )
        return (None, reason) if reason else (target, "")

    def _check_discovery(self, target: SimCluster, cfg: JoinConfig) -> str:
        match = TOKEN_RE.match(cfg.token)
        if match is None:
            return (
                f"the bootstrap token {cfg.token!r} was not of the form "
                "'^([a-z0-9]{6})\\.([a-z0-9]{16})$'"
            )
        token_id, token_secret = match.groups()
        info = target.store.get(CONFIGMAPS, "kube-public", "cluster-info")
        data = (info.obj.get("data") or {}) if info else {}
        signature = data.get(JWS_PREFIX + token_id)
        if signature is None:
            return (
                f"there is no JWS signed token in the cluster-info ConfigMap. This token id "
                f'"{token_id}" is invalid for this cluster, can\'t connect'
            )
        if not verify_detached(data.get("kubeconfig", ""), signature, token_id, token_secret):
            return (
                "failed to verify JWS signature of received cluster info object, can't trust "
                "this API Server"
            )
        if cfg.unsafe_skip_ca_verification:
            return ""
        if not cfg.ca_cert_hashes:
            return "discovery: neither caCertHashes nor unsafeSkipCAVerification are set"
        found = cluster_info_ca_hashes(data.get("kubeconfig", ""))
        if not any(h in cfg.ca_cert_hashes for h in found):  # kubeadm: pubKeyPins.CheckAny
            return (
                "cluster CA found in cluster-info ConfigMap is invalid: none of the public keys "
                f'"{", ".join(found)}" are pinned'
            )
        return ""

    def _check_version(self, target: SimCluster, cfg: JoinConfig, host: Host) -> str:
        kubelet = parse_version(host.kubelet_version)
        control_plane = parse_version(target.version)
        if cfg.api_version.endswith("v1beta4") and kubelet[:2] < (1, 31):
            return (
                f"kubeadm {host.kubelet_version} cannot read the configuration: no kind "
                f'"JoinConfiguration" is registered for version "{cfg.api_version}"'
            )
        if kubelet[:2] > control_plane[:2]:
            return (
                "the kubelet version is higher than the control plane version. This is not a "
                f"supported version skew and may lead to a malfunctional cluster. Kubelet "
                f'version: "{host.kubelet_version}" Control plane version: "{target.version}"'
            )
        return ""

    def _check_name(self, target: SimCluster, cfg: JoinConfig, host: Host) -> str:
        name = cfg.node_name or host.name
        if name != host.name:
            return (
                f"nodeRegistration.name {name!r} is not this host's node name {host.name!r}: "
                "the node would register under another name"
            )
        existing = target.store.get(NODES, "", name)
        if existing is not None and node_state(existing.obj) == "ready":
            return (
                f'a Node with name "{name}" and status "Ready" already exists in the cluster. '
                "You must delete the existing Node or change the name of this new joining Node"
            )
        return ""

    def _check_control_plane(self, target: SimCluster, cfg: JoinConfig) -> str:
        if not target.control_plane_endpoint:
            return (
                "unable to add a new control plane instance to a cluster that doesn't have a "
                "stable controlPlaneEndpoint address"
            )
        if target.store.get(SECRETS, "kube-system", CERTS_SECRET) is None:
            return (
                "error downloading certs: error downloading the secret: secrets "
                '"kubeadm-certs" not found'
            )
        expiry = target.uploaded_cert_keys.get(cfg.certificate_key.lower())
        if expiry is None or expiry <= self.world.clock.time():
            return (
                "error downloading certs: error decoding secret data with provided key: "
                "cipher: message authentication failed"
            )
        return ""

    def _check_tls_bootstrap(self, target: SimCluster, cfg: JoinConfig) -> str:
        match = TOKEN_RE.match(cfg.token)
        assert match is not None
        token_id, token_secret = match.groups()
        secret = target.store.get(SECRETS, "kube-system", TOKEN_PREFIX + token_id)
        values = token_fields(secret.obj) if secret else None
        unauthorized = "error execution phase kubelet-start: TLS bootstrap failed: Unauthorized"
        if values is None:
            return f"{unauthorized} (no bootstrap token {token_id} in the target)"
        if values.get("token-secret") != token_secret:
            return f"{unauthorized} (token secret does not match)"
        if expired(values, self.world.clock.time()):
            return f"{unauthorized} (token {token_id} expired)"
        if values.get("usage-bootstrap-authentication") != "true":
            return f"{unauthorized} (token {token_id} is not usable for authentication)"
        return ""
