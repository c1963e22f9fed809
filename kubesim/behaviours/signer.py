"""Bootstrap signer and token cleaner of the controller manager.

The signer keeps one ``jws-kubeconfig-<id>`` key in ``kube-public/cluster-info`` per valid
signing token; the cleaner deletes token Secrets once their ``expiration`` has passed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from kubesim.clock import parse_rfc3339
from kubesim.entries import Change
from kubesim.jws import detached_signature
from kubesim.objects import secret_values
from kubesim.resources import CONFIGMAPS, SECRETS

if TYPE_CHECKING:
    from kubesim.protocols import SimCluster, SimWorld

TOKEN_TYPE = "bootstrap.kubernetes.io/token"
TOKEN_PREFIX = "bootstrap-token-"
JWS_PREFIX = "jws-kubeconfig-"
ID_RE = re.compile(r"^[a-z0-9]{6}$")
SECRET_RE = re.compile(r"^[a-z0-9]{16}$")
TOKEN_RE = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})$")


def token_fields(secret: dict[str, Any]) -> dict[str, str] | None:
    """The decoded data of a well-formed bootstrap token Secret, else None."""
    meta = secret["metadata"]
    if secret.get("type") != TOKEN_TYPE or meta.get("namespace") != "kube-system":
        return None
    values = secret_values(secret)
    token_id = values.get("token-id", "")
    if not ID_RE.match(token_id) or meta["name"] != TOKEN_PREFIX + token_id:
        return None
    if not SECRET_RE.match(values.get("token-secret", "")):
        return None
    return values


def expired(values: dict[str, str], now: float) -> bool:
    expiration = values.get("expiration")
    if not expiration:
        return False
    when = parse_rfc3339(expiration)
    return when is None or when <= now


class BootstrapSigner:
    def __init__(self, world: SimWorld) -> None:
        self.world = world
        self._pending: set[str] = set()

    def on_change(self, cluster: SimCluster, change: Change) -> None:
        meta = change.new.meta
        if change.resource == "configmaps":
            if (meta.get("namespace"), meta.get("name")) == ("kube-public", "cluster-info"):
                self._later(cluster)
            return
        if change.new.obj.get("type") != TOKEN_TYPE:
            return
        self._later(cluster)
        if change.type != "DELETED":
            values = token_fields(change.new.obj)
            if values and values.get("expiration"):
                when = parse_rfc3339(values["expiration"]) or 0.0
                delay = max(0.0, when - self.world.clock.time())
                self.world.schedule(delay, lambda: self.clean(cluster))

    def _later(self, cluster: SimCluster) -> None:
        if cluster.name in self._pending:
            return
        self._pending.add(cluster.name)

        def run() -> None:
            self._pending.discard(cluster.name)
            self.sign(cluster)

        self.world.schedule(self.world.signer_delay_seconds, run)

    def clean(self, cluster: SimCluster) -> None:
        """Token cleaner: delete expired bootstrap token Secrets."""
        now = self.world.clock.time()
        with cluster.lock:
            for entry in cluster.store.list(SECRETS, "kube-system"):
                values = token_fields(entry.obj)
                if values is not None and expired(values, now):
                    cluster.store.remove(SECRETS, "kube-system", entry.meta["name"])

    def signing_tokens(self, cluster: SimCluster) -> dict[str, str]:
        """token id -> token secret for tokens the signer should sign with."""
        now = self.world.clock.time()
        tokens = {}
        for entry in cluster.store.list(SECRETS, "kube-system"):
            values = token_fields(entry.obj)
            if values is None or expired(values, now):
                continue
            if values.get("usage-bootstrap-signing") != "true":
                continue
            tokens[values["token-id"]] = values["token-secret"]
        return tokens

    def sign(self, cluster: SimCluster) -> None:
        with cluster.lock:
            entry = cluster.store.get(CONFIGMAPS, "kube-public", "cluster-info")
            if entry is None:
                return
            data = dict(entry.obj.get("data") or {})
            content = data.get("kubeconfig", "")
            wanted = {
                JWS_PREFIX + tid: detached_signature(content, tid, secret)
                for tid, secret in self.signing_tokens(cluster).items()
            }
            new = {k: v for k, v in data.items() if not k.startswith(JWS_PREFIX)}
            new.update(wanted)
            if new != data:
                obj = entry.copy()
                obj["data"] = new
                cluster.store.put(CONFIGMAPS, obj)
