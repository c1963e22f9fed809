"""An Ignition request as the request store keeps it, and where its file waits for delivery.

Shared by the bot (which creates the request and delivers the file) and the engine (which makes
the file): the bot never imports `workers`, so what both need to agree on lives here.

A request of kind `ignition` has `target` = the cluster, `role` = worker or control-plane,
`node` and `source` empty, and in `extra`:

- `byo`: the byo.yaml text (optional; checked with `joinops.ignition.byo.parse_byo` when asked for);
- `byo_dir`: the directory its relative paths are taken from (optional: without it, paths in
  the byo.yaml are refused — a configuration stored with a Slack request should be
  self-contained: `sshPublicKey`, `extraIgnitionInline`);
- `ttl`: the bootstrap token's lifetime, in seconds.

The engine adds, once the file is made: `ignition_sha256`, `ignition_valid_until` (epoch
seconds), `ignition_token_id`, `ignition_token_expires_at`, `ignition_certs_expire_at` (control
planes), `ignition_bytes`. The file itself is at `joinops:ignition:<request id>` for
`DELIVERY_TTL` seconds; the bot reads it with `fetch_file` and deletes it once delivered.
"""

from __future__ import annotations

from datetime import timedelta

import redis

from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from joinops.requests.store import Request

KIND = "ignition"
FILE_KEY = "joinops:ignition:"
DELIVERY_TTL = 15 * 60  # seconds the file waits in Redis for the bot to deliver it
DEFAULT_TTL = timedelta(hours=2)
MIN_TTL = timedelta(minutes=5)
MAX_TTL = timedelta(hours=24)  # kubeadm's own default lifetime; shorter is better

EXTRA_BYO = "byo"
EXTRA_BYO_DIR = "byo_dir"
EXTRA_TTL = "ttl"

SHA256 = "ignition_sha256"
VALID_UNTIL = "ignition_valid_until"
TOKEN_ID = "ignition_token_id"
TOKEN_EXPIRES_AT = "ignition_token_expires_at"
CERTS_EXPIRE_AT = "ignition_certs_expire_at"
SIZE = "ignition_bytes"


def new_request(
    *,
    cluster: str,
    role: Role = Role.WORKER,
    requester: str,
    ttl: timedelta = DEFAULT_TTL,
    byo_text: str = "",
    byo_dir: str = "",
    state: State = State.PENDING,
    **fields: object,
) -> Request:
    """A request to hand to `RequestStore.create` (id assigned there)."""
    extra = {EXTRA_TTL: str(int(ttl.total_seconds()))}
    if byo_text:
        extra[EXTRA_BYO] = byo_text
    if byo_dir:
        extra[EXTRA_BYO_DIR] = byo_dir
    return Request(
        id="",
        node="",
        source="",
        target=cluster,
        role=role,
        kind=KIND,
        state=state,
        requester=requester,
        extra=extra,
        **fields,  # type: ignore[arg-type]
    )


def filename(request: Request) -> str:
    """The name the file is sent under: `CLUSTER-worker.ign`, `CLUSTER-control-plane.ign`."""
    return f"{request.target}-{request.role}.ign"


def ttl_problem(ttl: timedelta) -> str | None:
    if not MIN_TTL <= ttl <= MAX_TTL:
        from joinops.ignition.texts import ttl_out_of_range

        return ttl_out_of_range(MIN_TTL, MAX_TTL)
    return None


def file_key(request_id: str) -> str:
    return FILE_KEY + request_id


def fetch_file(connection: redis.Redis, request_id: str) -> bytes | None:
    """The Ignition file waiting for delivery, or None (never made, or expired)."""
    data = connection.get(file_key(request_id))
    return bytes(data) if data is not None else None


def forget_file(connection: redis.Redis, request_id: str) -> None:
    """Delete the file once delivered: it carries a secret that can add nodes."""
    connection.delete(file_key(request_id))
