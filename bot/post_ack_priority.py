"""How much CPU the post-ack process leaves to the acks (`joinops serve --post-ack-priority`).

The acking process and its post-ack process share the CPU of one pod (or one machine). The
work after the acks can wait a moment; an ack cannot (Slack gives up after 3 s, and a burst of
commands queues behind whatever else runs). Two ways to step back:

- `idle`: Linux's `SCHED_IDLE`. The post-ack process runs only on CPU the acking process
  leaves over, and an ack that wakes up takes the CPU from it at once. The kernel weighs
  processes within their group — the container's cgroup in a pod, the session (autogroup) on a
  machine — so in a pod it yields to the acks and nothing else: what the chart runs. On a
  machine where the same session runs other busy work (a terminal's builds, a test suite's
  workers), it yields to that too and may wait for seconds: not the default. Measured in
  docs/benchmarks.md (Scale-out).
- a niceness from 0 to 19, added to the acking process's: 10 (the default) gives the acks about
  nine tenths of the CPU when both want it, 19 about 98 %.

Neither needs a privilege: lowering one's own priority is always allowed, in a container too.
Where it is refused all the same (a seccomp profile, a kernel without `SCHED_IDLE`), `idle`
falls back to niceness 19, a niceness to running at the acks' priority; said once in the log.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)

IDLE = "idle"
DEFAULT = 10
MOST = 19  # the lowest priority a niceness gives
Priority = str | int  # IDLE, or a niceness from 0 to MOST


def parse(value: str) -> Priority:
    """`idle` or a whole number from 0 to 19; raises ValueError otherwise (the caller says
    what is allowed: cli/texts.py)."""
    text = value.strip().lower()
    if text == IDLE:
        return IDLE
    if text.isascii() and text.isdigit() and int(text) <= MOST:
        return int(text)
    raise ValueError(value)


def step_back(priority: Priority) -> str:
    """Lower this process — every thread it has, and those it starts later, which inherit it —
    to `priority`; what it runs at now, for the log."""
    if priority == IDLE:
        try:
            _each_thread(lambda tid: os.sched_setscheduler(tid, os.SCHED_IDLE, os.sched_param(0)))
            return "SCHED_IDLE"
        except (AttributeError, OSError) as e:  # no SCHED_IDLE here, or refused
            log.warning("joinops bot: post-ack process not SCHED_IDLE (%s): niceness %d", e, MOST)
            priority = MOST
    assert isinstance(priority, int)
    niceness = min(MOST, os.getpriority(os.PRIO_PROCESS, 0) + priority)
    try:
        _each_thread(lambda tid: os.setpriority(os.PRIO_PROCESS, tid, niceness))
    except OSError as e:  # not allowed here: the work shares the CPU evenly with the acks
        log.warning("joinops bot: post-ack process at the acks' priority: %s", e)
        return "the acks' priority"
    return f"niceness {niceness}"


def _each_thread(lower: Callable[[int], object]) -> None:
    """On Linux a priority is a thread's: this one's (0), raising when refused, then each other
    one's there is already."""
    lower(0)
    tasks = Path("/proc/self/task")
    for task in tasks.iterdir() if tasks.is_dir() else ():
        if int(task.name) != threading.get_native_id():
            with contextlib.suppress(OSError):  # it ended meanwhile
                lower(int(task.name))
