"""Ignition for new hosts: read the cluster, make the file, create the join material.

Three parts, used by `joinops ignition` (CLI) and by the RQ job `generate_ignition` (Slack):

- `prepare(cluster, ask)` only reads the cluster: facts, CA hash, control planes. It mints the
  token and certificate key locally, builds the Ignition and validates it. Nothing is created,
  so every problem with the input surfaces before the cluster is touched.
- `create(cluster, prepared, ...)` creates the material the file needs, with the same code as a
  migration (`workers.material`): the bootstrap-token Secret, and for a control plane the
  certificate upload on an existing control plane. A failed upload deletes the token again.
- `generate_ignition(request_id)` runs both for an approved request of kind `ignition`, keeps
  the file in Redis for the bot to deliver, and records its expiry and SHA-256.
"""

from __future__ import annotations

import logging
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from joinops import capins
from joinops import ignition_request as ir
from joinops import ignition_texts as texts
from joinops.byo import ResolvedByo, parse_byo, resolve_byo
from joinops.errors import ClusterError, UsageError
from joinops.events import Event, EventKind
from joinops.ignition import (
    JOIN_UNIT,
    KUBEADM_CONF,
    IgnitionInputs,
    build_ignition,
    render,
    role_words,
    sha256,
)
from joinops.ignition_validate import problems as ignition_problems
from joinops.joinmaterial import (
    DEFAULT_API_PORT,
    KUBEADM_CERTS_LIFETIME,
    BootstrapToken,
    join_configuration,
    new_bootstrap_token,
    new_certificate_key,
)
from joinops.kube import KubeCluster
from joinops.lifecycle import State
from joinops.model import CONTROL_PLANE_LABEL, ClusterFacts, Role, Version
from joinops.settings import Settings, parse_duration
from joinops.store import Request
from workers import agent, material
from workers.context import EngineContext, current
from workers.errors import PermanentError
from workers.locks import LockSet, control_plane_lock

log = logging.getLogger(__name__)

STEP = "ignition"


class Refused(PermanentError):
    """A rule says no (the CLI exits 1): nothing was created."""


@dataclass(frozen=True)
class IgnitionAsk:
    cluster: str
    role: Role
    ttl: timedelta
    byo: ResolvedByo | None = None


@dataclass
class Prepared:
    """A built, validated file and the material it needs (not yet created)."""

    ask: IgnitionAsk
    facts: ClusterFacts
    endpoint: str
    token: BootstrapToken
    certificate_key: str | None
    upload_host: str  # a Ready control plane (the upload runs there; named in the commands)
    data: bytes
    sha256: str
    overridden: list[str]
    notes: list[str] = field(default_factory=list)

    @property
    def control_plane(self) -> bool:
        return self.certificate_key is not None


@dataclass(frozen=True)
class Created:
    token_secret: str
    token_expires_at: float
    certs_host: str = ""
    certs_expire_at: float = 0.0
    upload_pod: str = ""

    @property
    def valid_until(self) -> float:
        ends = [self.token_expires_at] + ([self.certs_expire_at] if self.certs_expire_at else [])
        return min(ends)


# --- preparing: reads only ---


def _cluster_info(cluster: KubeCluster) -> capins.ClusterInfo:
    try:
        return capins.read(cluster)
    except capins.ClusterInfoProblem as e:
        raise Refused(str(e)) from e


def prepare(cluster: KubeCluster, ask: IgnitionAsk) -> Prepared:
    """Read the cluster, mint the secrets locally, build and validate the file."""
    facts = cluster.facts()
    control_plane = ask.role is Role.CONTROL_PLANE
    if control_plane and not facts.control_plane_endpoint:
        raise Refused(texts.no_control_plane_endpoint(cluster.name))
    _check_version(ask.byo, facts.version)
    ready = [cp.name for cp in facts.control_planes if cp.ready]
    if control_plane and not ready:
        raise Refused(texts.no_ready_control_plane(cluster.name))
    info = _cluster_info(cluster)
    endpoint = info.endpoint(facts.control_plane_endpoint)
    token = new_bootstrap_token()
    certificate_key = new_certificate_key() if control_plane else None
    byo = ask.byo.config if ask.byo else None
    bind_port = byo.control_plane_bind_port() if byo else DEFAULT_API_PORT
    join_config = join_configuration(
        kubeadm_version=reader_version(ask.byo, facts.version),
        endpoint=endpoint,
        token=token,
        ca_hashes=info.ca_hashes,
        node_name=None,
        certificate_key=certificate_key,
        bind_port=bind_port,
    )
    networking = cluster.kubeadm_cluster_configuration().get("networking") or {}
    addresses: tuple[str, ...] = ()
    if control_plane and byo is not None and byo.virtual_ip:
        addresses = control_plane_addresses(cluster)
    inputs = IgnitionInputs(
        cluster=cluster.name,
        role=ask.role,
        join_config=join_config,
        endpoint=endpoint,
        target_minor=f"{facts.version.major}.{facts.version.minor}",
        byo=ask.byo,
        control_plane_addresses=addresses,
        service_subnet=str(networking.get("serviceSubnet") or ""),
        pod_subnet=str(networking.get("podSubnet") or ""),
    )
    built = build_ignition(inputs)
    found = ignition_problems(built.config)
    if found:
        # Only extra Ignition can break a file joinops builds: it is the operator's input.
        raise UsageError(
            "\n".join(f"the Ignition after merging extra Ignition: {p}" for p in found)
        )
    data = render(built.config)
    notes = _notes(ask, endpoint, built.overridden, bind_port)
    return Prepared(
        ask=ask,
        facts=facts,
        endpoint=endpoint,
        token=token,
        certificate_key=certificate_key,
        upload_host=ready[0] if ready else "",
        data=data,
        sha256=sha256(data),
        overridden=built.overridden,
        notes=notes,
    )


def control_plane_addresses(cluster: KubeCluster) -> tuple[str, ...]:
    """The InternalIP of every control plane (for the virtual IP's peers and nginx upstreams)."""
    nodes = cluster.call(
        "list", "nodes", cluster.core.list_node, label_selector=CONTROL_PLANE_LABEL
    )
    found = []
    for node in nodes.items:
        for address in node.status.addresses or []:
            if address.type == "InternalIP" and address.address:
                found.append(address.address)
                break
    return tuple(sorted(found))


def reader_version(byo: ResolvedByo | None, target: Version) -> Version:
    """The oldest kubeadm that may read the file: the byo.yaml's kubernetesVersion, else the
    oldest a new host may run (one minor below the cluster). So a 1.30 host joining a 1.31
    cluster gets a v1beta3 JoinConfiguration, which every kubeadm from 1.30 on reads."""
    if byo is not None and byo.config.kubernetes_version:
        return Version.parse(byo.config.kubernetes_version)
    return Version(target.major, max(target.minor - 1, 0), 0)


def _check_version(byo: ResolvedByo | None, target: Version) -> None:
    if byo is None or not byo.config.kubernetes_version:
        return
    wanted = Version.parse(byo.config.kubernetes_version)
    older = Version(target.major, target.minor - 1, 0)
    if wanted.major != target.major or wanted.minor not in (target.minor, target.minor - 1):
        raise Refused(
            texts.version_skew(
                wanted.minor_line, str(target), f"{target.minor_line}.x or {older.minor_line}.x"
            )
        )


def _notes(ask: IgnitionAsk, endpoint: str, overridden: list[str], bind_port: int) -> list[str]:
    notes = []
    if ask.byo is not None:
        cfg = ask.byo.config
        key = "virtualIp" if cfg.virtual_ip else "loadBalancer"
        host = endpoint.rsplit(":", 1)[0].strip("[]")
        if cfg.api_host and cfg.api_host.lower() != host.lower():
            notes.append(texts.endpoint_differs(cfg.api_host, key, endpoint))
    elif ask.role is Role.CONTROL_PLANE:
        notes.append(texts.no_byo_control_plane(bind_port))
    if overridden:
        notes.append(texts.extra_overrides(overridden))
        for item in (f"file {KUBEADM_CONF}", f"unit {JOIN_UNIT}"):
            if item in overridden:
                notes.append(texts.extra_replaces_join(item))
    return notes


# --- creating: writes to the cluster ---


def create(
    cluster: KubeCluster,
    prepared: Prepared,
    *,
    settings: Settings,
    request_id: str,
    description: str,
    clock: Callable[[], float] = time.time,
) -> Created:
    """The token Secret, then (control plane) the certificate upload; the token goes again if
    the upload fails."""
    now = clock()
    material.create_token(
        cluster,
        prepared.token,
        prepared.ask.ttl,
        description,
        agent.labels(request_id, "ignition-token"),
        now=now,
    )
    created = Created(prepared.token.secret_name, now + prepared.ask.ttl.total_seconds())
    if prepared.certificate_key is None:
        return created
    try:
        material.upload_certs(
            cluster,
            namespace=settings.agent.namespace,
            request_id=request_id,
            node=prepared.upload_host,
            image=settings.agent.image,
            certificate_key=prepared.certificate_key,
            timeout=settings.timeouts.upload_certs.total_seconds(),
            clock=clock,
        )
    except BaseException:
        _quietly_delete_token(cluster, prepared.token.id)
        raise
    uploaded = clock()
    return Created(
        created.token_secret,
        created.token_expires_at,
        certs_host=prepared.upload_host,
        certs_expire_at=uploaded + KUBEADM_CERTS_LIFETIME.total_seconds(),
        upload_pod=f"{settings.agent.namespace}/{agent.upload_pod_name(request_id)}",
    )


def _quietly_delete_token(cluster: KubeCluster, token_id: str) -> None:
    try:
        material.delete_token(cluster, token_id)
    except ClusterError as e:
        log.warning("could not delete bootstrap token %s in %s: %s", token_id, cluster.name, e)


def commands_script(prepared: Prepared, description: str) -> str:
    """What an operator runs on a control plane when joinops creates nothing (`--no-create`):
    the exact commands that make the file valid. It holds the secrets: written 0600, never
    printed."""
    from joinops.joinmaterial import kubeadm_token_ttl

    lines = [
        "#!/bin/sh",
        f"# joinops: run as root on a control plane of {prepared.ask.cluster} "
        f"(e.g. {prepared.upload_host}) before the new host boots.",
        "# It holds the join secret: delete this file afterwards.",
        "set -e",
        f"kubeadm token create {prepared.token.value} --ttl "
        f"{kubeadm_token_ttl(prepared.ask.ttl)} --description {shlex.quote(description)}",
    ]
    if prepared.certificate_key is not None:
        lines.append(
            "kubeadm init phase upload-certs --upload-certs --certificate-key "
            f"{prepared.certificate_key}"
        )
    return "\n".join(lines) + "\n"


def token_description(who: str) -> str:
    return f"joinops ignition for {who}"


# --- the RQ job (Slack path) ---


def generate_ignition(request_id: str) -> str:
    state = run_ignition(current(), request_id)
    return str(state) if state else "missing"


def run_ignition(ctx: EngineContext, request_id: str) -> State | None:
    """Carry out one approved ignition request. Returns its final state."""
    request = ctx.store.get(request_id)
    if request is None:
        return None
    if request.kind != ir.KIND:
        return request.state
    if request.state not in (State.APPROVED, State.RUNNING):
        return request.state
    if request.state is State.APPROVED:
        moved, _ = ctx.store.transition(request.id, State.RUNNING)
        if not moved:
            current_request = ctx.store.get(request.id)
            return current_request.state if current_request else None
    _emit(
        ctx,
        request.id,
        EventKind.STEP_STARTED,
        texts.job_started(request.target, role_words(request.role)),
    )
    try:
        outcome = _make(ctx, request)
    except (UsageError, PermanentError) as e:
        return _fail(ctx, request, str(e))
    except ClusterError as e:
        return _fail(ctx, request, e.detail)
    except Exception:
        log.exception("request %s: unexpected error making Ignition", request.id)
        return _fail(ctx, request, texts.JOB_INTERNAL_ERROR)
    _emit(ctx, request.id, EventKind.STEP_SUCCEEDED, outcome)
    return _finish(ctx, request, State.SUCCEEDED, outcome)


def ask_from_request(request: Request) -> IgnitionAsk:
    """The ask stored on a request; UsageError when its byo configuration does not hold."""
    ttl = parse_duration(int(request.extra.get(ir.EXTRA_TTL) or ir.DEFAULT_TTL.total_seconds()))
    problem = ir.ttl_problem(ttl)
    if problem:
        raise UsageError(f"ttl: {problem}")
    byo = None
    text = request.extra.get(ir.EXTRA_BYO, "")
    if text:
        where = "the request's byo configuration"
        base = request.extra.get(ir.EXTRA_BYO_DIR) or None
        byo = resolve_byo(parse_byo(text, where), where, Path(base) if base else None)
    return IgnitionAsk(request.target, request.role, ttl, byo)


def _make(ctx: EngineContext, request: Request) -> str:
    ask = ask_from_request(request)
    cluster = ctx.clusters.get(request.target)
    prepared = prepare(cluster, ask)
    locks = None
    if prepared.control_plane:
        locks = LockSet(
            ctx.redis,
            [control_plane_lock(request.target)],
            request.id,
            ctx.settings.timeouts.lock.total_seconds(),
        )
        held = locks.acquire()
        if held is not None:
            raise Refused(texts.control_plane_busy(request.target, held.holder))
        locks.keep_alive()
    try:
        # An interrupted earlier run may have left a token: it is never reused.
        previous = request.extra.get(ir.TOKEN_ID)
        if previous:
            _quietly_delete_token(cluster, previous)
        ctx.store.update(request.id, **{"x:" + ir.TOKEN_ID: prepared.token.id})
        created = create(
            cluster,
            prepared,
            settings=ctx.settings,
            request_id=request.id,
            description=token_description(f"{request.requester} ({request.id})"),
            clock=ctx.clock,
        )
    finally:
        if locks is not None:
            locks.release()
    try:
        ctx.redis.set(ir.file_key(request.id), prepared.data, ex=ir.DELIVERY_TTL)
    except Exception:
        _quietly_delete_token(cluster, prepared.token.id)
        raise
    fields: dict[str, object] = {
        ir.SHA256: prepared.sha256,
        ir.VALID_UNTIL: created.valid_until,
        ir.TOKEN_EXPIRES_AT: created.token_expires_at,
        ir.SIZE: len(prepared.data),
    }
    if created.certs_expire_at:
        fields[ir.CERTS_EXPIRE_AT] = created.certs_expire_at
    ctx.store.update(request.id, **{"x:" + k: v for k, v in fields.items()})
    _emit(
        ctx,
        request.id,
        EventKind.PROGRESS,
        texts.job_token(created.token_secret, created.token_expires_at),
    )
    if created.certs_host:
        _emit(
            ctx,
            request.id,
            EventKind.PROGRESS,
            texts.job_certs(created.certs_host, created.certs_expire_at),
        )
    return texts.ignition_ready(created.valid_until, prepared.sha256)


def _fail(ctx: EngineContext, request: Request, reason: str) -> State:
    text = texts.job_failed(reason)
    _emit(ctx, request.id, EventKind.STEP_FAILED, reason)
    return _finish(ctx, request, State.FAILED, text, failed_step=STEP)


def _finish(
    ctx: EngineContext, request: Request, state: State, outcome: str, failed_step: str = ""
) -> State:
    ctx.store.transition(request.id, state, outcome=outcome, failed_step=failed_step)
    ctx.reporter.emit(Event(request.id, EventKind.STATE, outcome, state=str(state), at=ctx.clock()))
    return state


def _emit(ctx: EngineContext, request_id: str, kind: EventKind, text: str) -> None:
    ctx.reporter.emit(Event(request_id, kind, text, step=STEP, at=ctx.clock()))
