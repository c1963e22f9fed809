"""Child processes that cannot outlive the process that started them (Linux).

A `redis-server` or a worker started for someone (the sandbox's) is stopped by its starter on
every path it can run code on; what is here covers the one it cannot: killed by SIGKILL, its
children are sent a signal by the kernel (PR_SET_PDEATHSIG) instead of living on as orphans. The
kernel ties a child to the thread that starts it: start it from the main thread, which lives as
long as the process.

Two ways to ask: `ended_with_parent(argv)` runs the program through util-linux's
`setpriv --pdeathsig` (no Python code runs in the forked child, which is not safe while other
threads run: a `preexec_fn` can deadlock there; without setpriv, the program runs as it is);
`end_with_parent(signum)` is a `preexec_fn`, for a process with no other thread yet.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
from collections.abc import Callable, Sequence
from functools import cache

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

try:
    _prctl: Callable[..., int] | None = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # not Linux: nothing to ask the kernel
    _prctl = None


def ended_with_parent(argv: Sequence[str]) -> list[str]:
    """`argv` started so that it is sent SIGTERM when the thread that starts it ends."""
    setpriv = _setpriv()
    return [setpriv, "--pdeathsig", "TERM", "--", *argv] if setpriv else list(argv)


def end_with_parent(signum: int = signal.SIGTERM) -> Callable[[], None]:
    """A `preexec_fn` for `subprocess.Popen`: the child is sent `signum` when this process's
    starting thread ends. Made before the fork (the library is loaded here, not in the child)."""
    parent = os.getpid()

    def in_child() -> None:
        if _prctl is None:
            return
        _prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0)
        if os.getppid() != parent:  # the parent ended before the request was made
            os.kill(os.getpid(), signum)

    return in_child


@cache
def _setpriv() -> str | None:
    """util-linux's setpriv, if it has --pdeathsig (2.33 and later)."""
    found = shutil.which("setpriv")
    if found is None:
        return None
    try:
        usage = subprocess.run([found, "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return found if "--pdeathsig" in usage.stdout else None
