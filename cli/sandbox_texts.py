"""What `joinops sandbox` prints: its next steps, its Redis, its refusals to start.

Commands are named as the user can type them: the `joinops` of this installation
(`.venv/bin/joinops` from the checkout), not a bare `joinops` that may not be on PATH.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path


def joinops() -> str:
    """This installation's `joinops`: bare when PATH finds this one, else its path (relative to
    the current directory when under it)."""
    mine = Path(sys.executable).with_name("joinops")
    found = shutil.which("joinops")
    if found and Path(found).resolve() == mine.resolve():
        return "joinops"
    try:
        return str(mine.relative_to(Path.cwd()))
    except ValueError:
        return str(mine)


def redis_in_use(url: str, own: bool, kept: bool, redis_url_env_set: bool) -> str:
    """Which Redis the sandbox keeps its requests in (`url` already redacted)."""
    if not own:
        chosen = f"Redis: {url}, named with --redis-url, used as it is (nothing is flushed)"
    elif kept:
        chosen = f"Redis: the sandbox's own, at {url}, with what the last run left (--keep-state)"
    else:
        chosen = (
            f"Redis: the sandbox's own, at {url}, empty (--keep-state would keep it for the "
            "next run)"
        )
    if redis_url_env_set and own:
        chosen += "; REDIS_URL is left for a real bot (name a database with --redis-url)"
    return chosen + "."


def next_steps(clusters: list[str], hosts: list[str], arrivals: str, redis: str, env: Path) -> str:
    """The terminal-only sandbox: the worker in a second shell, the commands in a third."""
    command, source = joinops(), f". {shlex.quote(str(env.resolve()))}"
    return (
        f"Simulated clusters are running: {', '.join(clusters)}.\n"
        f"Hosts {', '.join(hosts)} arrive in {arrivals}.\n"
        f"{redis}\n"
        f"In a second shell, the worker (it runs the migrations):\n"
        f"  {source}\n"
        f"  {command} worker\n"
        f"In a third shell:\n"
        f"  {source}\n"
        f"  {command} clusters\n"
        f"  {command} arrivals\n"
        f"  {command} plan a-w-1 --from clusterA --to clusterB\n"
        f"  {command} plan a-w-2 --from clusterA --to clusterB   # refused: a bare pod\n"
        f"  {command} plan a-cp-1 --from clusterA --to clusterB   # refused: last control plane\n"
        f"  {command} plan node-1 --from host-1 --to clusterB --as control-plane\n"
        f"  {command} migrate a-w-1 --from clusterA --to clusterB --yes\n"
        f"Press Ctrl-C to stop (the sandbox's Redis too)."
    )


def arrival_pace(directory: Path, seconds: float) -> str:
    pace = f"one every {seconds:g} s" if seconds else "all at once"
    return f"{directory} {pace}"


def slack_ready(url: str, worker_log: Path, redis: str, env: Path) -> str:
    return (
        f"The bot is serving a simulated Slack. Open its channel: {url}\n"
        f"  as alice (a requester) type `/join a-w-1 from clusterA to clusterB`,\n"
        f"  switch to bob (the approver) and click Approve; the thread fills as it runs.\n"
        f"Hosts arrive one by one and are announced there: Move into clusterB as worker\n"
        f"  opens a request for bob to approve.\n"
        f"A worker runs the migrations (its log: {worker_log}). The terminal works too:\n"
        f"  . {shlex.quote(str(env.resolve()))}\n"
        f"  {joinops()} list\n"
        f"{redis}\n"
        f"Press Ctrl-C to stop (the bot, the worker and the sandbox's Redis too)."
    )


def env_file(config: Path, redis_url: str) -> str:
    """The file another shell sources to reach the running sandbox."""
    return (
        "# source this file in another shell (`. FILE`): joinops there uses the running sandbox\n"
        f"export JOINOPS_CONFIG={shlex.quote(str(config.resolve()))}\n"
        f"export REDIS_URL={shlex.quote(redis_url)}\n"
    )


def host_arrived(name: str, path: Path) -> str:
    return f"Host {name} arrived: its kubeconfig is {path}"


def hosts_all_arrived(count: int, directory: Path) -> str:
    return f"All {count} hosts have arrived in {directory} (`{joinops()} arrivals` lists them)."


def port_refused(port: int, busy: bool, why: str) -> str:
    """The page's port cannot be listened on: which one, and the flag that picks another."""
    problem = "is in use (another sandbox?)" if busy else f"cannot be listened on ({why})"
    return (
        f"port {port} on 127.0.0.1 {problem}: choose another with --port N (0: any free "
        f"port), e.g. `make sandbox SANDBOX_ARGS='--port {port + 1}'`"
    )


def named_redis_silent(url: str, why: str) -> str:
    """--redis-url names a Redis that does not answer (`url` already redacted)."""
    return (
        f"--redis-url: nothing answers at {url} ({why}); start that Redis, or leave "
        "--redis-url out: the sandbox starts a Redis of its own"
    )


def redis_server_missing() -> str:
    return (
        "the sandbox starts a Redis of its own and redis-server is not installed: install it "
        "(Debian/Ubuntu: sudo apt-get install redis-server; `make sandbox` does as root), "
        "or name a Redis database with --redis-url"
    )


def redis_server_failed(log: Path) -> str:
    return f"the sandbox's redis-server did not start: see {log}"
