"""The ack benchmark's stand-ins for other machines, lowered where Linux shares the CPU by session.

`bench.support.start_process` starts every process in a session of its own and lowers the
stand-ins' niceness (`OTHER_MACHINES`: the workers; `lower_other_threads`: the simulated
clusters and Slack, threads of this process). With autogroups (`sched_autogroup_enabled`, on in
most distributions' kernels, for processes in the root cgroup) a niceness ranks a process only
within its session: the kernel shares the CPU between sessions first, evenly. A worker at
niceness 19 alone in its session had as much of it as the bot's whole session — measured
(2026-12-05): `/proc/PID/autogroup` said "nice 0" for each. What ranks a session is its own
niceness, in that file: here 19 for each worker's session and for this process's (the
simulated clusters and Slack), while the sending process gets a session of its own at full
priority. Where autogroups are off, or the processes are in a container's cgroup, the file is
absent or unused and the niceness already ranked them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from collections.abc import Iterator
from pathlib import Path

from bench.support import OTHER_MACHINES

RETRIES = 20  # the kernel takes one autogroup change per 0.1 s from an unprivileged process


def own_session() -> None:
    """For the sending process (a ProcessPoolExecutor's initializer): a session of its own, at
    full priority, not this one's."""
    os.setsid()


def lower_session(pid: int, niceness: int = OTHER_MACHINES) -> bool:
    """The session (autogroup) of `pid` at `niceness`; False where there is none to set."""
    path = Path(f"/proc/{pid}/autogroup")
    for _ in range(RETRIES):
        try:
            path.write_text(f"{niceness}\n")
            return True
        except OSError as e:
            if e.errno != errno.EAGAIN:
                return False
            time.sleep(0.1)
    return False


def session_niceness(pid: int) -> int | None:
    """`/proc/PID/autogroup` reads "/autogroup-N nice K": K, or None where there is none."""
    try:
        return int(Path(f"/proc/{pid}/autogroup").read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        return None


@contextlib.contextmanager
def this_session_lowered(niceness: int = OTHER_MACHINES) -> Iterator[None]:
    """This process's session lowered while the rows run, then back (raising a session's
    niceness back to what it was needs no privilege as long as it is not below 0)."""
    before = session_niceness(os.getpid())
    lowered = before is not None and lower_session(os.getpid(), niceness)
    try:
        yield
    finally:
        if lowered and before is not None:
            lower_session(os.getpid(), before)
