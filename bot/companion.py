"""The acking process's handle on its post-ack process (bot/post_ack_process.py): started with
it, watched, stopped after it.

`joinops serve --post-ack` in a child process: the same interpreter and environment (so the
same settings), its log lines in the bot's output. The kernel kills it with SIGKILL when the
acking process dies (PR_SET_PDEATHSIG), as a container's processes all end with its first: the
two never outlive each other. One that ends by itself ends the bot too (bot/serve.py), and
Kubernetes restarts the pod.
"""

from __future__ import annotations

import logging
import signal
import subprocess
import sys

from joinops.children import end_with_parent

log = logging.getLogger(__name__)


class Companion:
    def __init__(self, args: list[str]) -> None:
        """Start `joinops serve --post-ack ARGS` (call from the main thread: the kernel ties
        the child's end to the thread that starts it)."""
        self.process = subprocess.Popen(
            [sys.executable, "-m", "cli", "serve", "--post-ack", *args],
            stdin=subprocess.DEVNULL,
            preexec_fn=end_with_parent(signal.SIGKILL),
        )
        log.info("joinops bot: post-ack process started (pid %d)", self.process.pid)

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def exit_code(self) -> int | None:
        return self.process.poll()

    def stop(self, timeout: float) -> int:
        """SIGTERM (it finishes the jobs it runs, then exits), SIGKILL after `timeout` s."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            log.warning("joinops bot: the post-ack process did not stop in %.0f s", timeout)
            self.process.kill()
            return self.process.wait()
