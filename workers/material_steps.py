"""The join-material step: a bootstrap token, the CA pins, control-plane certificates and the
agent's Secret; kept fresh until the node agent starts, and removed when the request ends.

Token ids are remembered before their Secret is created, so whatever happens next they can be
deleted; a token's secret is never stored.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import yaml

from joinops.clusters import capins, hostpods
from joinops.clusters.kubeletconfig import read_kubelet_config
from joinops.errors import ClusterError
from joinops.joinmaterial import (
    DEFAULT_API_PORT,
    KUBEADM_CERTS_LIFETIME,
    BootstrapToken,
    join_configuration,
    new_bootstrap_token,
    new_certificate_key,
)
from joinops.requests import host_texts, step_texts
from joinops.requests.model import Role
from workers import agent, certkeys, hostprobe, material, nodelabels, return_material
from workers.errors import PermanentError
from workers.run import Run

TOKEN_SIGNED_WITHIN = 60.0  # seconds the target's bootstrap signer may take to sign a new token


def prepare_join_material(run: Run) -> str:
    if _made_before(run):
        undo_join_material(run)  # an interrupted earlier attempt's token is never reused
    target, timeouts = run.target, run.ctx.settings.timeouts
    facts = target.facts()
    try:
        info = capins.read(target)  # what the node will see, not what joinops's kubeconfig says
    except capins.ClusterInfoProblem as e:
        raise PermanentError(str(e)) from e
    bind_port = target.api_server_port() or DEFAULT_API_PORT  # kubeadm's, for a bare endpoint
    endpoint = info.endpoint(facts.control_plane_endpoint, bind_port)
    ca_hashes = info.ca_hashes
    run.remember("join-material", ca_hashes=ca_hashes)
    node = run.source.get_node(run.request.node)
    hostpods.ensure_namespace(run.source, run.namespace)
    host = _host_facts(run)
    token = _mint_token(
        run, timeouts.drain + timeouts.join + timeouts.upload_certs + timedelta(minutes=10)
    )
    certificate_key = None
    if run.request.role is Role.CONTROL_PLANE:
        certificate_key = new_certificate_key()
        uploader = _upload_host(run, facts.control_planes)
        certkeys.ensure_free(run.ctx.redis, run.request.target, run.id, run.ctx.clock())
        material.upload_certs(
            target,
            namespace=run.namespace,
            request_id=run.id,
            node=uploader,
            image=run.ctx.settings.agent.image,
            certificate_key=certificate_key,
            timeout=timeouts.upload_certs.total_seconds(),
            clock=run.ctx.clock,
        )
        uploaded = run.ctx.clock()
        run.remember("join-material", certs_uploaded_at=uploaded, certs_host=uploader)
        until = uploaded + KUBEADM_CERTS_LIFETIME.total_seconds()
        certkeys.record(run.ctx.redis, run.request.target, run.id, certkeys.MIGRATION, until)
    config = join_configuration(
        kubeadm_version=min(node.kubelet_version, facts.version) if node else facts.version,
        endpoint=endpoint,
        token=token,
        ca_hashes=ca_hashes,
        node_name=run.request.node,
        certificate_key=certificate_key,
        advertise_address=node.internal_ip if node else None,
        bind_port=bind_port,
        kubelet_args=host.kept_flags,
        cri_socket=host.cri_socket,
        taints=_carried(run).get("taints"),
    )
    ports = [10250] + ([bind_port, 10259, 10257, 2379, 2380] if certificate_key else [])
    back, forgone = return_material.prepare_or_forgo(run, host)
    material.put_secret(
        run.source,
        run.namespace,
        agent.join_secret_name(run.id),
        {
            agent.JOIN_KEY: yaml.safe_dump(config, sort_keys=False),
            agent.CA_KEY: b"".join(info.ca_pems).decode(),
            agent.ENDPOINT_KEY: endpoint,
            agent.PORTS_KEY: " ".join(str(p) for p in ports),
            agent.NODE_IP_KEY: host.kept_flags.get("node-ip", ""),
            **back,
        },
        agent.labels(run.id, "join"),
    )
    ready = step_texts.material_ready(
        run.request.target, token.id, endpoint, run.request.role is Role.CONTROL_PLANE
    )
    return f"{ready} {forgone}" if forgone else ready


def _host_facts(run: Run) -> hostprobe.HostFacts:
    """The node's kubelet flags and runtime, read once from the host (the facts pod) before
    anything changes; a runtime whose cgroup driver the target's kubelet would refuse stops
    the move here."""
    memory = run.memory("join-material").get("host")
    if memory is not None:
        return hostprobe.HostFacts.from_memory(memory)
    host = hostprobe.read_host_facts(run)
    wanted = read_kubelet_config(run.target).cgroup_driver
    if wanted and host.cgroup_driver not in ("unknown", wanted):
        raise PermanentError(
            host_texts.cgroup_driver_mismatch(
                run.request.node, host.cgroup_driver, run.request.target, wanted
            )
        )
    run.remember("join-material", host=host.as_memory())
    return host


def _made_before(run: Run) -> bool:
    """Could an earlier attempt have made any of this request's material? Not before it
    minted a token: the token's id is remembered before anything is created, and the agent's
    Secret and the return material are made after it. Then there is nothing to delete."""
    memory = run.memory("join-material")
    return bool(memory.get("minted_ids") or memory.get("token_ids"))


def _carried(run: Run) -> dict[str, Any]:
    """The node's own labels and taints to carry over ({} when the option is off), read from
    the source once, before anything changes."""
    if not run.ctx.settings.agent.keep_labels_and_taints:
        return {}
    memory = run.memory("join-material").get("carried")
    if memory is None:
        memory = nodelabels.read_own(run.source, run.request.node)
        run.remember("join-material", carried=memory)
    return dict(memory)


def _mint_token(run: Run, ttl: timedelta) -> BootstrapToken:
    token = new_bootstrap_token()
    memory = run.memory("join-material")
    minted = [*memory.get("token_ids", []), token.id]
    # Remember the id before creating the Secret: whatever happens next, it can be deleted.
    run.remember(
        "join-material",
        token_id=token.id,
        token_ids=minted,
        minted_ids=[*memory.get("minted_ids", []), token.id],
        token_expires_at=run.ctx.clock() + ttl.total_seconds(),
    )
    material.create_token(
        run.target,
        token,
        ttl,
        step_texts.token_description(run.id),
        agent.labels(run.id, "token"),
        now=run.ctx.clock(),
    )
    run.token = token
    return token


def _upload_host(run: Run, control_planes: tuple[Any, ...]) -> str:
    ready = [cp.name for cp in control_planes if cp.ready]
    if not ready:
        raise PermanentError(step_texts.no_ready_control_plane(run.request.target))
    return ready[0]


def undo_join_material(run: Run) -> None:
    """Delete every token this request minted, the agent's Secret and the return record."""
    delete_tokens(run, every=True)
    _quietly(lambda: return_material.delete_record(run))
    _quietly(
        lambda: material.delete_quietly(
            run.source, run.namespace, "secret", agent.join_secret_name(run.id)
        )
    )


def delete_tokens(run: Run, every: bool = False) -> None:
    """Delete the tokens this request minted, by the ids it remembered (no list needed).

    `every`: also those deleted before. A create that timed out may still have succeeded on the
    server after an earlier delete found nothing (404): the end of a request deletes them all."""
    memory = run.memory("join-material")
    ids = list(memory.get("token_ids", []))
    if every:
        ids += [i for i in memory.get("minted_ids", []) if i not in ids]
    for token_id in ids:
        material.delete_token(run.target, token_id)
    run.remember("join-material", token_ids=[])
    return_material.delete_return_tokens(run)  # the source's, by their ids: on every ending


def fresh_material(run: Run) -> dict[str, str]:
    """Join material good until the join can finish, whose token this process knows. The
    target's cluster-info as just seen signed for that token: the agent step's last check of
    it (workers.preflight) need not read it again right after."""
    seen = None if _material_stale(run) else _signed_cluster_info(run)
    if seen is None:
        prepare_join_material(run)
        seen = _signed_cluster_info(run)
        if seen is None:
            raise PermanentError(step_texts.token_not_signed(run.request.target))
    return seen


def _material_stale(run: Run) -> bool:
    """Would the token or uploaded certificates expire before the join can finish?"""
    memory, now = run.memory("join-material"), run.ctx.clock()
    join = run.ctx.settings.timeouts.join.total_seconds()
    if float(memory.get("token_expires_at", 0)) < now + join:
        return True
    uploaded = memory.get("certs_uploaded_at")
    if uploaded is None:
        return False
    return float(uploaded) + KUBEADM_CERTS_LIFETIME.total_seconds() < now + join + 300


def _signed_cluster_info(run: Run) -> dict[str, str] | None:
    """The target's cluster-info once signed for our token, as the joining node will check
    (None: not signed within `TOKEN_SIGNED_WITHIN`).

    The bootstrap signer signs it shortly after the token Secret appears and drops the
    signature when the token goes; waiting for it needs no right to read Secrets.
    """
    token_id = run.memory("join-material").get("token_id", "")
    deadline = run.ctx.clock() + TOKEN_SIGNED_WITHIN
    return material.wait_for_signature(run.target, token_id, deadline, run.ctx.clock)


def after_failure(run: Run) -> None:
    """Past the point of no return, only the token is worth removing (it can add nodes)."""
    _quietly(lambda: delete_tokens(run, every=True))


def _quietly(action: Callable[[], None]) -> None:
    try:
        action()
    except ClusterError:
        pass  # best effort: the outcome message says what may be left
