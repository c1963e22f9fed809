"""Nothing outlives its test: a test that leaves a thread, a child process or a listening socket
behind fails, naming what it left.

A thread left running can log into a later test's captured output, or, in CPython 3.11, crash
pytest itself (an AST recursion-depth error when it compiles while pytest parses a traceback:
python/cpython#106905); a process or a server left running holds a port and a Redis connection.
Every harness is stopped by its fixture, on every path; this checks that it was.

What a test's function-scoped fixtures started must be gone once they are torn down; what a
module's fixtures started (in their set-up, and a running server's connection threads) once the
module's last test is. Things ending on their own are given GRACE seconds (a stopped server's
last thread finishing its `join`), polled, not slept.
"""

from __future__ import annotations

import ctypes
import os
import socketserver
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import psutil
import pytest

GRACE = 20.0  # seconds for stopped things to finish ending: generous for a 10x slower machine


@dataclass(frozen=True)
class Snapshot:
    threads: frozenset[threading.Thread]
    children: frozenset[tuple[int, float, int]]  # (pid, create time, parent pid)
    listening: frozenset[tuple[str, int]]

    @classmethod
    def take(cls) -> Snapshot:
        me = psutil.Process()
        return cls(
            threads=frozenset(t for t in threading.enumerate() if t.is_alive()),
            children=frozenset(_alive_children(me)),
            listening=frozenset(_listening(me)),
        )

    def __sub__(self, other: Snapshot) -> Snapshot:
        return Snapshot(
            self.threads - other.threads,
            self.children - other.children,
            self.listening - other.listening,
        )

    def __or__(self, other: Snapshot) -> Snapshot:
        return Snapshot(
            self.threads | other.threads,
            self.children | other.children,
            self.listening | other.listening,
        )

    def named(self, wider_scoped_servers_running: bool = False) -> list[str]:
        """Each thing, named for the failure message; with `wider_scoped_servers_running`,
        without the connection threads of servers still listening (a module's server serving
        a module's worker is the module's business)."""
        left = [
            f"thread {t.name!r} ({'daemon' if t.daemon else 'non-daemon'}, target {_target(t)})"
            for t in self.threads
            if not (wider_scoped_servers_running and _serves_a_running_server(t))
        ]
        for pid, _, parent in sorted(self.children):
            if parent == os.getpid():  # a process's own children are its business
                left.append(f"child process {pid}: {_command_line(pid)}")
        left.extend(f"listening socket {host}:{port}" for host, port in sorted(self.listening))
        return left


def become_subreaper() -> None:
    """Processes orphaned by a test's children (a sandbox killed before its worker) become this
    process's children, so the check sees them instead of losing them to init (Linux only)."""
    pr_set_child_subreaper = 36
    try:
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_child_subreaper, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def pytest_configure(config: pytest.Config) -> None:
    become_subreaper()


EMPTY = Snapshot(frozenset(), frozenset(), frozenset())
_wider_scoped = EMPTY  # what the module's (or a wider) fixtures started in their set-up


def leftovers_since(before: Snapshot, module_running: bool = False) -> list[str]:
    """What is still left after up to GRACE seconds; [] as soon as nothing is."""
    deadline = time.monotonic() + GRACE
    while True:
        left = (Snapshot.take() - before - _wider_scoped).named(module_running)
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.05)


@pytest.fixture(autouse=True)
def nothing_outlives_the_test() -> Iterator[None]:
    """Set up first and torn down last of a test's fixtures: checks what they left."""
    before = Snapshot.take()
    yield
    _fail_on(leftovers_since(before, module_running=True), "this test left behind")


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[object]) -> Iterator[object]:
    """What a wider-scoped fixture starts is its module's, even when its set-up runs within a
    test's (a module fixture first asked for by the module's second test)."""
    global _wider_scoped
    if fixturedef.scope == "function":
        return (yield)
    before = Snapshot.take()
    try:
        return (yield)
    finally:
        _wider_scoped = _wider_scoped | (Snapshot.take() - before)


_module_start: dict[str, Snapshot] = {}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    module = item.nodeid.split("::")[0]
    if module not in _module_start:
        _module_start.clear()
        _module_start[module] = Snapshot.take()  # before the module's fixtures start anything


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    yield
    module = item.nodeid.split("::")[0]
    if nextitem is not None and nextitem.nodeid.split("::")[0] == module:
        return
    global _wider_scoped
    before = _module_start.pop(module, None)
    _wider_scoped = EMPTY
    if before is not None:
        _fail_on(leftovers_since(before), f"the fixtures of {module} left behind")


def _fail_on(left: list[str], what: str) -> None:
    if left:
        pytest.fail(f"{what}: " + "; ".join(left), pytrace=False)


def _alive_children(me: psutil.Process) -> Iterator[tuple[int, float, int]]:
    for child in me.children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                yield child.pid, child.create_time(), child.ppid()
        except psutil.NoSuchProcess:
            continue


def _listening(me: psutil.Process) -> Iterator[tuple[str, int]]:
    for connection in me.net_connections(kind="inet"):
        if connection.status == psutil.CONN_LISTEN and connection.laddr:
            yield connection.laddr.ip, connection.laddr.port


def _serves_a_running_server(thread: threading.Thread) -> bool:
    server = getattr(getattr(thread, "_target", None), "__self__", None)
    return isinstance(server, socketserver.BaseServer) and server.socket.fileno() != -1


def _target(thread: threading.Thread) -> str:
    target = getattr(thread, "_target", None)
    if target is None:
        return type(thread).__qualname__
    return getattr(target, "__qualname__", repr(target))


def _command_line(pid: int) -> str:
    try:
        return " ".join(psutil.Process(pid).cmdline())[:200] or "?"
    except psutil.Error:
        return "(ended)"
