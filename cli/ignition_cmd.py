"""`joinops ignition --cluster NAME [--as ROLE] [--config byo.yaml] [--ttl 2h] [--no-create]`:
Ignition for a new host that joins NAME on first boot.

The file goes to stdout; what the operator must know (validity, what was created, the file's
SHA-256) goes to stderr. Bad input exits 2 and creates nothing: the byo.yaml, the files it
names and the whole Ignition are checked before the cluster is written to.

Whether the join material is created in the cluster: `--create` / `--no-create` on the command
line, else byo.yaml's `providers.byo.automaticTokenCreation`, else yes. With `--no-create` the
commands that make the file valid are written to a 0600 file (`--commands-file`), never printed:
they hold the join secret.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from cli.common import add_role_argument, load
from joinops.errors import ClusterError, UsageError
from joinops.ignition import request as ir
from joinops.ignition import texts
from joinops.requests.ids import new_request_id
from joinops.requests.surface import terminal_user
from joinops.settings import Settings, parse_duration


def register(sub: Any) -> None:
    p = sub.add_parser(
        "ignition",
        help="write Ignition (JSON, stdout) for a new host that joins a cluster on first boot",
        description=(
            "Write Ignition (spec 3.4.0) for a new host that joins the cluster on first boot. "
            "The file goes to stdout, what you must know about it to stderr."
        ),
    )
    p.add_argument("--cluster", metavar="NAME", help="the cluster the host joins")
    add_role_argument(p)
    p.add_argument(
        "--config",
        metavar="BYO_YAML",
        help="the reference CLI's cluster configuration (byo.yaml), unchanged",
    )
    p.add_argument(
        "--ttl",
        default="2h",
        help="how long the bootstrap token stays valid (default 2h; 5m to 24h)",
    )
    p.add_argument(
        "--create",
        dest="create",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=(
            "create the token (and upload the certificates) in the cluster now; --no-create "
            "writes the commands to run instead (default: byo.yaml's "
            "automaticTokenCreation, else create)"
        ),
    )
    p.add_argument(
        "--commands-file",
        metavar="PATH",
        help="with --no-create: where to write the commands (default ./joinops-<cluster>-<id>.sh)",
    )
    p.add_argument(
        "--check",
        metavar="FILE",
        help="only check an Ignition file against the spec 3.4.0 rules (exit 0 valid, 2 not)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.check:
        return check_file(Path(args.check))
    if not args.cluster:
        raise UsageError(texts.CLUSTER_REQUIRED)
    settings, registry = load()
    cluster = registry.get(args.cluster)  # UsageError for an unknown cluster
    ttl = _ttl(args.ttl)
    byo = None
    if args.config:
        from joinops.ignition.byo_resolve import load_and_resolve

        byo = load_and_resolve(Path(args.config))
    create, why_not = _decide_create(args.create, byo)

    from workers.errors import PermanentError
    from workers.ignition.create import commands_script, token_description
    from workers.ignition.prepare import IgnitionAsk, prepare

    who = terminal_user(getpass.getuser())
    request_id = new_request_id()
    description = token_description(f"{who} ({request_id})")
    try:
        prepared = prepare(cluster, IgnitionAsk(args.cluster, args.role, ttl, byo))
        created = None
        commands_path = None
        if create:
            created = _create_locked(cluster, prepared, settings, request_id, description)
        else:
            commands_path = _write_commands(
                args.commands_file,
                args.cluster,
                prepared,
                commands_script(prepared, description),
            )
    except (PermanentError, ClusterError) as e:
        print(f"joinops: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(prepared.data.decode())
    sys.stdout.flush()
    _summary(prepared, created, commands_path, why_not, request_id)
    return 0


def check_file(path: Path) -> int:
    from joinops.ignition.config import join_configuration_of
    from joinops.ignition.validate import problems

    try:
        config = json.loads(path.read_text())
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror or e}") from None
    except ValueError as e:
        raise UsageError(f"{path}: not JSON: {e}") from None
    found = problems(config)
    if found:
        raise UsageError("\n".join(f"{path}: {p}" for p in found))
    print(texts.check_ok(str(path)))
    join = join_configuration_of(config)
    if join:
        endpoint = join.get("discovery", {}).get("bootstrapToken", {}).get("apiServerEndpoint")
        role = "control plane" if "controlPlane" in join else "worker"
        print(texts.check_join(str(endpoint), role))
    return 0


def _ttl(value: str) -> timedelta:
    try:
        ttl = parse_duration(value)
    except ValueError as e:
        raise UsageError(texts.bad_ttl(value, str(e))) from None
    problem = ir.ttl_problem(ttl)
    if problem:
        raise UsageError(texts.bad_ttl(value, problem))
    return ttl


def _decide_create(flag: bool | None, byo: Any) -> tuple[bool, str]:
    """Command line first, then byo.yaml's automaticTokenCreation, then create."""
    if flag is not None:
        return flag, "" if flag else texts.NO_CREATE_FLAG
    automatic = byo.config.automatic_token_creation if byo is not None else None
    if automatic is False:
        return False, texts.NO_CREATE_BYO
    return True, ""


def _create_locked(
    cluster: Any, prepared: Any, settings: Settings, request_id: str, description: str
) -> Any:
    """Create the material; for a control plane under the cluster's control-plane lock, so that
    the upload cannot break a control-plane migration the engine is running."""
    from workers import certkeys
    from workers.ignition.create import create

    locks = None
    if prepared.control_plane:
        locks = _take_control_plane_lock(settings, cluster.name, request_id)
    try:
        if locks is not None:  # never overwrite a key another join relies on
            certkeys.ensure_free(locks.redis, cluster.name, request_id, time.time())
        created = create(
            cluster,
            prepared,
            settings=settings,
            request_id=request_id,
            description=description,
            clock=time.time,
        )
        if locks is not None and created.certs_expire_at:
            certkeys.record(
                locks.redis, cluster.name, request_id, certkeys.IGNITION, created.valid_until
            )
        return created
    finally:
        if locks is not None:
            locks.release()


def _take_control_plane_lock(settings: Settings, cluster: str, owner: str) -> Any:
    import redis

    from workers.ignition.prepare import Refused
    from workers.locks import LockSet, control_plane_lock

    connection = redis.Redis.from_url(
        settings.secrets.redis_url, socket_connect_timeout=1, socket_timeout=2
    )
    locks = LockSet(
        connection, [control_plane_lock(cluster)], owner, settings.timeouts.lock.total_seconds()
    )
    try:
        held = locks.acquire()
    except redis.RedisError:
        print(texts.redis_unreachable_for_lock(cluster), file=sys.stderr)
        return None
    if held is not None:
        raise Refused(texts.control_plane_busy(cluster, held.holder))
    locks.keep_alive()
    return locks


def _write_commands(chosen: str | None, cluster: str, prepared: Any, script: str) -> Path:
    path = Path(chosen) if chosen else Path(f"joinops-{cluster}-{prepared.token.id}.sh")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise UsageError(texts.commands_file_exists(path)) from None
    except OSError as e:
        raise UsageError(texts.commands_file_unwritable(path, e.strerror or str(e))) from None
    with os.fdopen(fd, "w") as f:
        f.write(script)
    return path


def _summary(
    prepared: Any, created: Any, commands_path: Path | None, why_not: str, request_id: str
) -> None:
    from joinops.ignition.config import role_words
    from joinops.joinmaterial import kubeadm_token_ttl

    ask = prepared.ask
    lines = [
        texts.summary_head(
            ask.cluster, role_words(ask.role), str(prepared.facts.version), prepared.endpoint
        )
    ]
    if created is not None:
        lines.append(
            texts.created_token(
                ask.cluster, created.token_secret, created.token_expires_at, ask.ttl
            )
        )
        if created.certs_host:
            lines.append(
                texts.uploaded_certs(
                    ask.cluster, created.certs_host, created.certs_expire_at, created.upload_pod
                )
            )
        lines.append(texts.valid_until(created.valid_until))
        if created.certs_host:
            lines.append(texts.CERTS_KEPT)
        lines.append(texts.revoke(prepared.token.id, request_id))
    else:
        assert commands_path is not None
        lines.append(texts.nothing_created(ask.cluster, why_not))
        lines.append(texts.run_commands(ask.cluster, prepared.upload_host, commands_path))
        lines += texts.command_shapes(
            prepared.token.id, kubeadm_token_ttl(ask.ttl), prepared.control_plane
        )
        lines.append(texts.no_create_validity(ask.ttl, prepared.control_plane))
        if prepared.control_plane:
            lines.append(texts.CERTS_REPLACED)
    lines += prepared.notes
    if sys.stdout.isatty():
        lines.append(texts.STDOUT_IS_A_TERMINAL)
    lines.append(texts.sha256_line(prepared.sha256))
    print("\n".join(lines), file=sys.stderr, flush=True)
