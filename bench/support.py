"""What the benchmarks share: simulated worlds wired to settings, processes, statistics.

A few lines here repeat `tests/support` on purpose: the benchmarks must run without pytest
and without importing the test tree.
"""

from __future__ import annotations

import math
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis
import yaml

from joinops.private_redis import PrivateRedis
from joinops.requests.events import Event, RedisEventLog
from joinops.settings import FileConfig, Secrets, Settings, build_settings
from kubesim import World

REDIS_URL_ENV = "JOINOPS_BENCH_REDIS_URL"  # a database the benchmarks may flush, named explicitly
APPROVERS = ["UAPPROVER1"]


def named_redis_url() -> str | None:
    """The database the user named for the benchmarks (flushed), or None: a private server."""
    return os.environ.get(REDIS_URL_ENV) or None


def fresh_redis(url: str) -> redis.Redis:
    """A client on the benchmarks' database, emptied."""
    client = redis.Redis.from_url(url)
    client.flushdb()
    return client


# --- settings for a simulated world ---


def config_dict(
    world: World, kubeconfig: Path, only: Iterable[str] | None = None, **overrides: Any
) -> dict[str, Any]:
    """joinops' configuration for the clusters of `world` (or `only` these); timeouts stay at
    their defaults."""
    world.write_kubeconfig(kubeconfig)
    names = list(world.clusters) if only is None else list(only)
    config: dict[str, Any] = {
        "clusters": {name: {"kubeconfig": str(kubeconfig), "context": name} for name in names},
        "approvers": APPROVERS,
    }
    config.update(overrides)
    return config


def write_config(world: World, directory: Path, **overrides: Any) -> Path:
    path = directory / "joinops.yaml"
    path.write_text(yaml.safe_dump(config_dict(world, directory / "kubeconfig", **overrides)))
    return path


def settings_for(
    world: World, directory: Path, url: str, only: Iterable[str] | None = None, **overrides: Any
) -> Settings:
    raw = config_dict(world, directory / "kubeconfig", only, **overrides)
    return build_settings(FileConfig.model_validate(raw), Secrets(redis_url=url))


# --- processes ---


def start_process(
    args: list[str],
    log: Path,
    env: dict[str, str] | None = None,
    module: str = "cli",
    niceness: int = 0,
) -> subprocess.Popen[bytes]:
    """`python -m MODULE ARGS` in its own process group, output to `log`; with `niceness`, at
    that lower CPU priority (its children too)."""
    return subprocess.Popen(
        [sys.executable, "-m", module, *args],
        env={**os.environ, **(env or {})},
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=(lambda: os.nice(niceness)) if niceness else None,
    )


def start_worker(config: Path, url: str, log: Path, niceness: int = 0) -> subprocess.Popen[bytes]:
    """A real `joinops worker` process."""
    name = f"bench-{log.stem}-{uuid.uuid4().hex[:8]}"
    env = {"JOINOPS_CONFIG": str(config), "REDIS_URL": url}
    return start_process(["worker", "--name", name], log, env, niceness=niceness)


# Stand-ins for other machines (workers, simulated clusters, simulated Slack) run at this
# niceness where a benchmark measures a process that would have the CPU to itself.
OTHER_MACHINES = 19


def lower_other_threads(niceness: int = OTHER_MACHINES) -> int:
    """Every thread of this process but the calling one to `niceness` (on Linux the niceness is
    a thread's: the threads they start later inherit it); how many were lowered."""
    lowered = 0
    for task in Path("/proc/self/task").iterdir():
        tid = int(task.name)
        if tid == threading.get_native_id():
            continue
        try:
            os.setpriority(os.PRIO_PROCESS, tid, niceness)
        except OSError:  # ended meanwhile
            continue
        lowered += 1
    return lowered


def stop_process(process: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """SIGTERM the process group, SIGKILL it after `grace` seconds."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def wait_workers_ready(connection: redis.Redis, count: int, timeout: float = 60.0) -> None:
    """Until `count` RQ workers have registered (imports done, listening on the queue)."""
    from rq import Worker

    deadline = time.monotonic() + timeout
    while len(Worker.all(connection=connection)) < count:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{count} workers did not register within {timeout:.0f} s")
        time.sleep(0.1)


def wait_final(connection: redis.Redis, request_id: str, timeout: float) -> Event:
    """Block on the request's event stream until its final state event."""
    deadline = time.monotonic() + timeout
    for event in RedisEventLog(connection).follow(request_id, block_ms=500):
        if event is not None and event.is_final:
            return event
        if time.monotonic() > deadline:
            raise TimeoutError(f"{request_id}: not finished within {timeout:.0f} s")
    raise AssertionError("the event stream ended")


class Footprint:
    """Peak resident memory (VmHWM) per role, over every process sampled for it."""

    def __init__(self) -> None:
        self.peak_kib: dict[str, int] = {}
        self.idle_kib: dict[str, int] = {}

    def sample(self, role: str, pid: int, idle: bool = False) -> None:
        """Read the process's high-water mark now (call it before the process ends)."""
        kib = proc_status_kib(pid, "VmRSS" if idle else "VmHWM")
        if kib is None:
            return
        book = self.idle_kib if idle else self.peak_kib
        book[role] = max(book.get(role, 0), kib)


def proc_status_kib(pid: int, field: str) -> int | None:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return None


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the process has used so far (0.0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


# --- statistics ---


def median(values: Iterable[float]) -> float:
    return float(statistics.median(list(values)))


def percentile(values: Iterable[float], q: float) -> float:
    """The q-th percentile (0-100), nearest rank: a value that was actually observed."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


@dataclass(frozen=True)
class CpuShare:
    """Where the machine's CPU went over an interval: how busy all its cores were, and the CPU
    seconds of the workers, of this process (the simulated clusters and the benchmark) and of
    Redis."""

    busy: float  # 0..1, all cores together
    workers: float
    here: float
    redis: float

    def words(self) -> str:
        return (
            f"{os.cpu_count()} cores {self.busy:.0%} busy (CPU s: workers {self.workers:.1f}, "
            f"simulated clusters and bench {self.here:.1f}, Redis {self.redis:.1f})"
        )


class CpuMeter:
    """Measures a `CpuShare` between `start()` and `stop()`, from /proc and Redis's INFO."""

    def __init__(self, connection: redis.Redis, worker_pids: list[int]) -> None:
        self.connection, self.worker_pids = connection, worker_pids
        self._at: tuple[float, float, float, float, float] | None = None

    def start(self) -> None:
        self._at = self._now()

    def stop(self) -> CpuShare:
        assert self._at is not None, "start() first"
        busy0, total0, workers0, here0, redis0 = self._at
        busy1, total1, workers1, here1, redis1 = self._now()
        return CpuShare(
            (busy1 - busy0) / max(total1 - total0, 1.0),
            workers1 - workers0,
            here1 - here0,
            redis1 - redis0,
        )

    def _now(self) -> tuple[float, float, float, float, float]:
        fields = [float(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)  # idle + iowait
        info = self.connection.info("cpu")
        return (
            sum(fields) - idle,
            sum(fields),
            sum(cpu_seconds(pid) for pid in self.worker_pids),
            cpu_seconds(os.getpid()),
            float(info["used_cpu_user"]) + float(info["used_cpu_sys"]),
        )


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "nproc": len(os.sched_getaffinity(0)),  # what `nproc` prints
        "cpu": model or platform.processor() or "unknown",
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()}",
        # Other work on the machine skews every figure: the 1-minute load average at the start
        # (`load_average_end` is added when the run ends).
        "load_average": round(os.getloadavg()[0], 2),
    }


@dataclass
class Env:
    """What every row's benchmark gets: the mode, the shared footprint, the Redis database."""

    quick: bool
    footprint: Footprint = field(default_factory=lambda: Footprint())
    _url: str = ""
    _server: PrivateRedis | None = None

    @property
    def redis_url(self) -> str:
        """Asked for only by the benchmarks that need Redis, which flush it: the database named
        in JOINOPS_BENCH_REDIS_URL, else a private `redis-server` started for this run."""
        if not self._url:
            named = named_redis_url()
            if named is None:
                directory = Path(tempfile.mkdtemp(prefix="joinops-bench-redis-"))
                # a bench killed outright takes it along (tests/support/session_redis.py: why
                # only from the main thread)
                main_thread = threading.current_thread() is threading.main_thread()
                self._server = PrivateRedis(directory, ends_with_parent=main_thread).start()
                named = self._server.url
            self._url = named
        return self._url

    def close(self) -> None:
        """Stops the private Redis, if one was started."""
        if self._server is not None:
            self._server.stop()
            shutil.rmtree(self._server.directory, ignore_errors=True)
            self._server = None


def block_texts(blocks: Any) -> list[str]:
    """Each `text` string inside Block Kit blocks, in order (sections, fields, buttons...)."""
    texts: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("text"), str):
                texts.append(node["text"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(blocks)
    return texts


def message_text(message: dict[str, Any]) -> str:
    """Every text of a Slack message: its `text` and each `text` string inside its blocks."""
    return "\n".join([str(message.get("text") or ""), *block_texts(message.get("blocks") or [])])
