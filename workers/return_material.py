"""Return material: what the node needs to go back into its source if the target join fails.

Prepared with the target's join material, before the point of no return, and carried in the
same mounted Secret as a second JoinConfiguration: a bootstrap token in the *source* (short TTL,
deleted on every ending), the source's cluster-info pins and endpoint as the node will see them,
for a control plane a certificate upload on another of the source's control planes, and the
node's original role. The source also gets the request's record ConfigMap
(`joinops-return-<id>`, workers/fallback.py): the agent's phases are written there, so a resumed
run reads them from the source, not from Redis alone. The agent writes them with the return
token: a Role (get, patch on that ConfigMap alone) bound to the token's extra group
(agent.return_group) lets it, and goes with the record on every ending.

A source destroyed by the move (its last node) can take nothing back: no return material. A
source that will not let joinops prepare it (a 403 on the Role, a 422 from an admission policy,
no other Ready control plane to upload certificates from) does not stop the move: the move goes
on as before there were returns, and the thread says that this node cannot come back by itself
(`prepare_or_forgo`). What was made before the refusal is removed at once.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import yaml
from kubernetes import client

from joinops.clusters import capins
from joinops.errors import (
    ClusterConflict,
    ClusterError,
    ClusterForbidden,
    ClusterInvalid,
    ClusterNotFound,
)
from joinops.joinmaterial import (
    DEFAULT_API_PORT,
    KUBEADM_CERTS_LIFETIME,
    join_configuration,
    new_bootstrap_token,
    new_certificate_key,
)
from joinops.requests import return_texts, step_texts
from workers import agent, certkeys, material
from workers.errors import PermanentError
from workers.hostprobe import HostFacts
from workers.run import Run

MEMORY = "join-material"  # the return token ids live with the target's: one memory to undo
FORGONE = "return_forgone"  # in MEMORY: why the source would not let a way back be prepared
RECORD_MADE = "return_record_made"  # in MEMORY: the record, its Role and binding may exist
LIFECYCLE_TAINTS = "node.kubernetes.io/"  # set by the node controller, never restored
# what a source answers when it will not let the way back be prepared; anything else (an
# unreachable source, a 5xx) is retried as every step's calls are
REFUSALS = (ClusterForbidden, ClusterInvalid, ClusterNotFound)


class _CannotPrepare(Exception):
    """The source has no way back to offer this node (no cluster-info, no other control plane)."""


def returnable(run: Run) -> bool:
    """Can the node go back if the join fails? With `agent.return_to_source`, unless the move
    destroys its source or the source refused to let the way back be prepared. Not on OCK
    hosts: their re-join goes through the host's ocne service, which has no way back."""
    agent_settings = run.ctx.settings.agent
    if not agent_settings.return_to_source or agent_settings.host_profile == "ock":
        return False
    if run.request.destroys_source:
        return False
    return not run.memory(MEMORY).get(FORGONE)


def prepare_or_forgo(run: Run, host: HostFacts) -> tuple[dict[str, str], str]:
    """The return material's Secret keys and "" — or, when the source refuses it, no keys and
    the line the thread shows: the move goes on without a way back, and what was made is
    removed. Nothing (and "") when the node cannot return anyway."""
    if not returnable(run):
        return {}, ""
    try:
        return prepare(run, host), ""
    except (_CannotPrepare, *REFUSALS) as e:
        why = str(e)
    run.remember(MEMORY, **{FORGONE: why})
    delete_return_tokens(run)
    delete_record(run)
    return {}, return_texts.forgone(run.request, why)


def prepare(run: Run, host: HostFacts) -> dict[str, str]:
    """The return material's Secret keys (agent.RETURN_*); the record ConfigMap in the source."""
    source, timeouts = run.source, run.ctx.settings.timeouts
    node = source.get_node(run.request.node)
    if node is None:
        raise PermanentError(return_texts.node_gone_before_return(run.request))
    try:
        info = capins.read(source)
    except capins.ClusterInfoProblem as e:
        raise _CannotPrepare(str(e)) from e
    facts = source.facts()
    bind_port = source.api_server_port() or DEFAULT_API_PORT
    endpoint = info.endpoint(facts.control_plane_endpoint, bind_port)
    was = _node_as_it_is(run)
    # long enough for the agent to start, the target join to fail, and the way back
    ttl = timeouts.agent_start + timeouts.join * 2 + timedelta(minutes=15)
    token = _mint(run, ttl)
    certificate_key = None
    if run.request.from_control_plane:
        certificate_key = _upload_in_source(
            run, [cp.name for cp in facts.control_planes if cp.ready]
        )
    config = join_configuration(
        kubeadm_version=node.kubelet_version,
        endpoint=endpoint,
        token=token,
        ca_hashes=info.ca_hashes,
        node_name=run.request.node,
        certificate_key=certificate_key,
        advertise_address=node.internal_ip,
        bind_port=bind_port,
        kubelet_args=host.kept_flags,
        cri_socket=host.cri_socket,
        taints=was["taints"],
    )
    _record(run, was)
    _grant_record(run)
    return {
        agent.RETURN_KEY: yaml.safe_dump(config, sort_keys=False),
        agent.RETURN_CA_KEY: b"".join(info.ca_pems).decode(),
        agent.RETURN_ENDPOINT_KEY: endpoint,
        agent.RETURN_TOKEN_KEY: token.value,
        agent.NODE_NAME_KEY: run.request.node,
        agent.JOIN_SECONDS_KEY: str(int(timeouts.join.total_seconds())),
    }


def _node_as_it_is(run: Run) -> dict[str, Any]:
    """Its labels and taints in the source, read once before anything changes (cordon's
    taint and the node controller's are not its own)."""
    memory = run.memory(MEMORY).get("return_was")
    if memory is not None:
        return dict(memory)
    found = run.source.call(
        "get", f"nodes/{run.request.node}", run.source.core.read_node, run.request.node
    )
    taints = [
        {k: v for k, v in (("key", t.key), ("value", t.value), ("effect", t.effect)) if v}
        for t in (found.spec.taints or [] if found.spec else [])
        if not t.key.startswith(LIFECYCLE_TAINTS)
    ]
    was = {"labels": dict(found.metadata.labels or {}), "taints": taints}
    run.remember(MEMORY, return_was=was)
    return was


def _mint(run: Run, ttl: timedelta) -> Any:
    token = new_bootstrap_token()
    memory = run.memory(MEMORY)
    # the id first, as for the target's: whatever happens next, it can be deleted
    run.remember(MEMORY, return_token_ids=[*memory.get("return_token_ids", []), token.id])
    material.create_token(
        run.source,
        token,
        ttl,
        step_texts.token_description(run.id),
        agent.labels(run.id, "return-token"),
        now=run.ctx.clock(),
        extra_group=agent.return_group(run.id),
    )
    return token


def _upload_in_source(run: Run, ready: list[str]) -> str:
    """The source's control-plane certificates under a new key, on another control plane."""
    others = [name for name in ready if name != run.request.node]
    if not others:
        raise _CannotPrepare(return_texts.no_other_control_plane(run.request))
    key = new_certificate_key()
    certkeys.ensure_free(run.ctx.redis, run.request.source, run.id, run.ctx.clock())
    try:
        material.upload_certs(
            run.source,
            namespace=run.namespace,
            request_id=run.id,
            node=others[0],
            image=run.ctx.settings.agent.image,
            certificate_key=key,
            timeout=run.ctx.settings.timeouts.upload_certs.total_seconds(),
            clock=run.ctx.clock,
        )
    except PermanentError as e:  # the pod failed or timed out: the move needs no way back
        raise _CannotPrepare(str(e)) from e
    until = run.ctx.clock() + KUBEADM_CERTS_LIFETIME.total_seconds()
    certkeys.record(run.ctx.redis, run.request.source, run.id, certkeys.MIGRATION, until)
    return key


def _record(run: Run, was: dict[str, Any]) -> None:
    """The request's record in the source, where the agent writes its phases."""
    run.remember(MEMORY, **{RECORD_MADE: True})  # first: whatever happens next, it is removed
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": agent.return_record_name(run.id),
            "namespace": run.namespace,
            "labels": agent.labels(run.id, "return"),
        },
        "data": {"phase": "prepared", "was": json.dumps(was, sort_keys=True)},
    }
    create = run.source.core.create_namespaced_config_map
    try:
        run.source.call(
            "create", f"configmaps/{agent.return_record_name(run.id)}", create, run.namespace, body
        )
    except ClusterConflict:
        pass  # an earlier attempt's: its phases are the agent's, never overwritten


def _grant_record(run: Run) -> None:
    """The Role on the record alone and its binding to the return token's group; idempotent."""
    name, group = agent.return_record_name(run.id), "rbac.authorization.k8s.io"
    meta = {"name": name, "namespace": run.namespace, "labels": agent.labels(run.id, "return")}
    role = {
        "apiVersion": f"{group}/v1",
        "kind": "Role",
        "metadata": meta,
        "rules": [
            {
                "apiGroups": [""],
                "resources": ["configmaps"],
                "resourceNames": [name],
                "verbs": ["get", "patch"],
            }
        ],
    }
    binding = {
        "apiVersion": f"{group}/v1",
        "kind": "RoleBinding",
        "metadata": meta,
        "roleRef": {"apiGroup": group, "kind": "Role", "name": name},
        "subjects": [{"apiGroup": group, "kind": "Group", "name": agent.return_group(run.id)}],
    }
    rbac = client.RbacAuthorizationV1Api(run.source.api_client)
    for resource, create, body in (
        ("roles", rbac.create_namespaced_role, role),
        ("rolebindings", rbac.create_namespaced_role_binding, binding),
    ):
        try:
            run.source.call("create", f"{resource}/{name}", create, run.namespace, body)
        except ClusterConflict:
            pass  # an earlier attempt's, the same


def _revoke_record(run: Run) -> None:
    name = agent.return_record_name(run.id)
    rbac = client.RbacAuthorizationV1Api(run.source.api_client)
    for resource, delete in (
        ("rolebindings", rbac.delete_namespaced_role_binding),
        ("roles", rbac.delete_namespaced_role),
    ):
        try:
            run.source.call("delete", f"{resource}/{name}", delete, name, run.namespace)
        except ClusterNotFound:
            pass


def delete_return_tokens(run: Run) -> None:
    """The source's return tokens, by their remembered ids; a source that is gone has none."""
    ids = list(run.memory(MEMORY).get("return_token_ids", []))
    if not ids:
        return
    for token_id in ids:
        try:
            material.delete_token(run.source, token_id)
        except ClusterError:
            return  # the ids stay remembered: a later ending deletes them; they expire anyway
    run.remember(MEMORY, return_token_ids=[])


def delete_record(run: Run) -> None:
    """The request's return record in the source, if one may have been made, and the Role and
    RoleBinding that let the agent write it."""
    if not (run.memory(MEMORY).get(RECORD_MADE) or returnable(run)):
        return
    _revoke_record(run)
    try:
        run.source.call(
            "delete",
            f"configmaps/{agent.return_record_name(run.id)}",
            run.source.core.delete_namespaced_config_map,
            agent.return_record_name(run.id),
            run.namespace,
        )
    except ClusterNotFound:
        pass
