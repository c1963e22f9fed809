"""A host for the node agent's unit: the real /bin/sh in a mount and network namespace of its own.

`unshare --mount --net --map-root-user` gives the script a private mount table and no network.
The host's own /etc/kubernetes, /var/lib/kubelet, /var/lib/joinops, /etc/cni, /var/lib/cni and
/root/.kube are never touched: they need not exist here, so /etc, /var/lib and /root are each
covered by an overlay whose upper layer is in the test's tmp_path (what the script writes or
deletes lands there, and the test reads it after), and /sys/class/net by a directory of the
test's interfaces. PATH is the fakes (tests/host/fakes.py) and links to the ordinary tools the
script needs, nothing else: a command the script starts needing shows up as "not found". The
environment is otherwise empty, as in a systemd unit (no HOME, no locale).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
OVERLAID = ("etc", "var/lib", "root")
FAKES = (
    "kubeadm",
    "curl",
    "systemctl",
    "ip",
    "iptables-save",
    "iptables-restore",
    "ip6tables-save",
    "ip6tables-restore",
    "ipvsadm",
    "sleep",
    "chroot",
    "systemd-run",
)
# what the unit runs besides the fakes: coreutils, grep, sed (on every Debian/Ubuntu host)
TOOLS = (
    "cat",
    "cut",
    "date",
    "grep",
    "head",
    "ls",
    "rm",
    "sed",
    "seq",
    "tail",
    "tr",
    "install",
    "mkdir",
    "chmod",
)
WRAPPER = """set -eu
root=$1; shift
for d in {overlaid}; do
  mount -t overlay overlay -o "lowerdir=/$d,upperdir=$root/upper/$d,workdir=$root/work/$d" "/$d"
done
mount --bind "$root/net" /sys/class/net
cd /
exec /usr/bin/env -i "PATH=$root/fakebin:$root/tools" "$@"
"""
LAUNCHER = """#!{python} -S
import sys
sys.path.insert(0, {repo!r})
from tests.host.fakes import main
sys.exit(main({fake!r}))
"""


@dataclass
class Ran:
    rc: int
    journal: str  # stdout and stderr, as the unit's journal holds both


class Host:
    def __init__(self, root: Path, interfaces: tuple[str, ...] = ()) -> None:
        self.root = root
        for d in OVERLAID:
            (root / "upper" / d).mkdir(parents=True)
            (root / "work" / d).mkdir(parents=True)
        for interface in interfaces:
            (root / "net" / interface).mkdir(parents=True)
        (root / "net").mkdir(exist_ok=True)
        (root / "fake").mkdir()
        (root / "fakebin").mkdir()
        (root / "tools").mkdir()
        launcher = LAUNCHER.format(python=sys.executable, repo=str(REPO), fake=str(root / "fake"))
        for name in FAKES:
            path = root / "fakebin" / name
            path.write_text(launcher)
            path.chmod(0o755)
        for name in TOOLS:
            found = shutil.which(name)
            assert found is not None, f"{name} is not on this machine"
            (root / "tools" / name).symlink_to(found)
        (root / "ns.sh").write_text(WRAPPER.format(overlaid=" ".join(OVERLAID)))
        (root / "fake" / "calls.jsonl").write_text("")

    def path(self, host_path: str) -> Path:
        """Where `host_path` (absolute, under an overlaid directory) is in the upper layer."""
        for d in OVERLAID:
            if host_path.startswith(f"/{d}/"):
                return self.root / "upper" / d / host_path.removeprefix(f"/{d}/")
        raise ValueError(f"{host_path} is not under {OVERLAID}")

    def write(self, host_path: str, text: str, mode: int = 0o600) -> None:
        path = self.path(host_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(mode)

    def exists(self, host_path: str) -> bool:
        return self.path(host_path).exists()

    def interfaces(self) -> list[str]:
        return sorted(p.name for p in (self.root / "net").iterdir())

    def without(self, name: str) -> None:
        """The host lacks this command (a minimal host without curl)."""
        (self.root / "fakebin" / name).unlink()

    def fake_file(self, name: str) -> Path:
        return self.root / "fake" / name

    @property
    def state(self) -> dict[str, Any]:
        return dict(json.loads(self.fake_file("state.json").read_text()))

    @state.setter
    def state(self, value: dict[str, Any]) -> None:
        self.fake_file("state.json").write_text(json.dumps(value, indent=1))

    def calls(self, name: str | None = None) -> list[list[str]]:
        lines = self.fake_file("calls.jsonl").read_text().splitlines()
        calls = [json.loads(line) for line in lines]
        return [c[1:] if name else c for c in calls if name is None or c[0] == name]

    def run(self, *argv: str, timeout: float = 60) -> Ran:
        """`argv` in the namespace; nothing of it is left running after."""
        process = subprocess.Popen(
            [
                "unshare",
                "--mount",
                "--net",
                "--map-root-user",
                "--fork",
                "--kill-child",  # the shell dies with unshare, whatever happens to the test
                "/bin/sh",
                str(self.root / "ns.sh"),
                str(self.root),
                *argv,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            text=True,
        )
        try:
            out, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, _ = process.communicate()
            raise AssertionError(f"still running after {timeout}s:\n{out}") from None
        return Ran(process.returncode, out)
