"""One certificate key per target at a time.

`kube-system/kubeadm-certs` is one Secret per cluster: `kubeadm init phase upload-certs`
replaces it, encrypted under the new key (cmd/kubeadm/app/phases/copycerts/copycerts.go,
`UploadCerts`: CreateOrUpdateSecret), so a host holding an earlier key can no longer decrypt
the certificates its `join --control-plane` needs. An Ignition file carries its key for up to two
hours, a migration until its node has joined.

The key is never stored — as a bootstrap token's secret half is not: with a token it unlocks the
cluster's CA keys. So an upload cannot be shared. Instead each upload is recorded per target in
Redis (who relies on it and until when, never the key), under the target's control-plane lock
that every upload takes; an upload while another holder's is relied on is refused, naming the
time it frees up. An Ignition file's upload is relied on until the file can no longer join (its
token or its certificates expire); a migration's only while that migration is active.
"""

from __future__ import annotations

from dataclasses import dataclass

import redis

from joinops.requests import certkey_texts
from joinops.requests.store import RequestStore
from workers.errors import PermanentError

IGNITION = "ignition"
MIGRATION = "migration"


class KeyInUse(PermanentError):
    """Another holder relies on the target's uploaded certificates: nothing was uploaded."""


@dataclass(frozen=True)
class Upload:
    holder: str  # the request that uploaded
    kind: str  # IGNITION or MIGRATION
    until: float  # epoch seconds: relied on until then at most


def key_of(target: str) -> str:
    return f"joinops:certkey:{target}"


def current(client: redis.Redis, target: str) -> Upload | None:
    """The recorded upload into `target`, if any."""
    fields = {_s(k): _s(v) for k, v in client.hgetall(key_of(target)).items()}
    if not fields.get("holder"):
        return None
    return Upload(fields["holder"], fields.get("kind", IGNITION), float(fields.get("until", 0)))


def relied_on(client: redis.Redis, target: str, asker: str, now: float) -> Upload | None:
    """The upload into `target` that someone other than `asker` still relies on, else None."""
    upload = current(client, target)
    if upload is None or upload.holder == asker or upload.until <= now:
        return None
    if upload.kind == MIGRATION:
        holder = RequestStore(client).get(upload.holder)
        if holder is None or holder.state.is_terminal:
            return None  # that node has joined or the move ended: nobody needs the key
    return upload


def ensure_free(client: redis.Redis, target: str, asker: str, now: float) -> None:
    """Raise KeyInUse when an upload into `target` now would break someone else's join."""
    upload = relied_on(client, target, asker, now)
    if upload is not None:
        raise KeyInUse(
            certkey_texts.relied_on(target, upload.holder, upload.kind == IGNITION, upload.until)
        )


def record(client: redis.Redis, target: str, holder: str, kind: str, until: float) -> None:
    """Remember who relies on the upload just made, until when (the key expires with it)."""
    key = key_of(target)
    pipe = client.pipeline()
    pipe.delete(key)
    pipe.hset(key, mapping={"holder": holder, "kind": kind, "until": repr(until)})
    pipe.expireat(key, int(until) + 1)
    pipe.execute()


def _s(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
