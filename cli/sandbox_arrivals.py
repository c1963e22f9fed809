"""`joinops sandbox`'s hosts arriving: each single-node host's kubeconfig written into the
sandbox's `hosts.d` one by one, `--arrival-seconds` apart, as a provisioning system hands hosts
over whenever they are ready. The sandbox's `arrivals:` points at that directory, so the bot
announces each host as it comes (and the CLI's `joinops arrivals` lists them).

Each file is written beside the directory's others under a hidden name, then renamed into
place: the directory never shows half a file. Files left by an earlier run (other ports, other
certificates) are removed first.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cli import sandbox_texts

HOSTS_DIR = "hosts.d"
TARGET = "clusterB"  # the announcement proposes moving each host there, as a worker
POLL = "1s"  # the sandbox's bot looks at the directory this often

WriteKubeconfig = Callable[[str, Path], object]  # cluster name, path: that cluster's own file


def config(directory: Path, channel: str | None) -> dict[str, Any]:
    """The sandbox configuration's `arrivals:`."""
    arrivals: dict[str, Any] = {"directory": str(directory.resolve())}
    if channel:
        arrivals["channel"] = channel
    arrivals["propose"] = {"to": TARGET, "as": "worker"}
    arrivals["poll"] = POLL
    return arrivals


def clear(directory: Path, hosts: Sequence[str]) -> None:
    """Remove the files an earlier run wrote for these hosts."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in hosts:
        (directory / f"{name}.yaml").unlink(missing_ok=True)


class Arrivals:
    """Writes the hosts' files on a thread of its own; `stop()` ends it between two hosts."""

    def __init__(
        self,
        directory: Path,
        hosts: Sequence[str],
        write: WriteKubeconfig,
        seconds: float,
        say: Callable[[str], None] = lambda line: print(line, flush=True),
    ) -> None:
        self.directory, self.hosts, self.write = directory.resolve(), list(hosts), write
        self.seconds, self.say = seconds, say
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sandbox-arrivals", daemon=True)

    def start(self) -> Arrivals:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(10)

    def _run(self) -> None:
        for i, name in enumerate(self.hosts):
            if i and self.seconds and self._stopping.wait(self.seconds):
                return
            self.say(sandbox_texts.host_arrived(name, self.drop(name)))
        self.say(sandbox_texts.hosts_all_arrived(len(self.hosts), self.directory))

    def drop(self, name: str) -> Path:
        final = self.directory / f"{name}.yaml"
        temporary = self.directory / f".{name}.yaml.tmp"
        self.write(name, temporary)
        os.replace(temporary, final)
        return final
