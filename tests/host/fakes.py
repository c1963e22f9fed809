"""The host commands the node agent's unit calls, as programs a test puts first on its PATH.

Run as `kubeadm`, `curl`, `systemctl`, `ip`, `iptables-save` ... (tests/host/hostns.py writes a
launcher per name). Every call is appended to `calls.jsonl`; what each answers comes from
`state.json`, which the test writes and reads back. Each stands for a real behaviour:

- curl: curl 7.x/8.x's flags as the unit uses them (`-sS`, `--max-time`, `--cacert`, `--cert`,
  `--key`, `-H`, `-X`, `-d`, `-o`, `-w '%{http_code}'`): exit 0 whatever the HTTP status (no
  `-f`), the body on stdout or in `-o`'s file, then `-w`'s code; exit 77 for a missing CA file,
  58 for a missing client certificate, 60 when the server is not signed by the CA given, 7 when
  nothing listens there. Behind it, a kube-apiserver (tests/host/apiserver.py).
- kubeadm: `reset -f` deletes what kubeadm's reset deletes (kubelet.conf and the other
  kubeconfigs, the contents of /etc/kubernetes/pki, /etc/kubernetes/manifests and
  /var/lib/kubelet) and nothing else (CNI, iptables, root's kubeconfig stay, as it says);
  `join --config F` fails its preflight while /etc/kubernetes/kubelet.conf exists (a tab before
  `[ERROR ...]`, as kubeadm prints it), fails at kubelet-start while a Ready Node of its name
  stands in the cluster, or as the test instructs; every failure ends with kubeadm's "To see the
  stack trace of this error execute with --v=5 or higher" and exit 1. A join that succeeds
  writes kubelet.conf (its `server:` the discovery endpoint), pki/ca.crt and the kubelet's
  client certificate, and the kubelet registers the Node.
- ip: `ip link delete NAME` removes the interface (from the test's /sys/class/net).
- iptables-save / iptables-restore (and ip6tables-): the rules the test wrote, and what the unit
  restores in their place.
- systemctl, ipvsadm, sleep: recorded, nothing else (a test never waits for real seconds).
"""

from __future__ import annotations

import fcntl
import json
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.host import apiserver

TRAILER = "To see the stack trace of this error execute with --v=5 or higher"
PREFLIGHT_KUBELET_CONF = (
    "[preflight] Running pre-flight checks\n"
    "error execution phase preflight: [preflight] Some fatal errors occurred:\n"
    "\t[ERROR FileAvailable--etc-kubernetes-kubelet.conf]: /etc/kubernetes/kubelet.conf "
    "already exists\n"
    "[preflight] If you know what you are doing, you can make a check non-fatal with "
    "`--ignore-preflight-errors=...`"
)
NODE_EXISTS = (
    'error execution phase kubelet-start: a Node with name {name!r} and status "Ready" already '
    "exists in the cluster. You must delete the existing Node or change the name of this new "
    "joining Node"
)
RESET_FILES = ("admin.conf", "kubelet.conf", "bootstrap-kubelet.conf", "super-admin.conf")
RESET_DIRS = ("/etc/kubernetes/manifests", "/var/lib/kubelet", "/etc/kubernetes/pki")
KUBELET_CONF = Path("/etc/kubernetes/kubelet.conf")
CA = Path("/etc/kubernetes/pki/ca.crt")
CLIENT_CERT = Path("/var/lib/kubelet/pki/kubelet-client-current.pem")


def main(state_dir: str) -> int:
    """One call: logged, then answered. The fakes of a pipeline run at once (`iptables-save |
    ... | iptables-restore`), so the state is read and written under a lock, and only by the
    fakes that use it."""
    name, args = Path(sys.argv[0]).name, sys.argv[1:]
    directory = Path(state_dir)
    with (directory / "calls.jsonl").open("a") as log:
        log.write(json.dumps([name, *args]) + "\n")
    if name in FILE_HANDLERS:
        return FILE_HANDLERS[name](args, directory)
    if name not in STATE_HANDLERS:
        return 0
    with (directory / "state.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state = json.loads((directory / "state.json").read_text())
        rc = STATE_HANDLERS[name](state, args)
        (directory / "state.json").write_text(json.dumps(state, indent=1))
        return rc


def kubeadm(state: dict[str, Any], args: list[str]) -> int:
    if args == ["reset", "-f"]:
        print("[reset] Deleting contents of directories: " + " ".join(RESET_DIRS))
        for name in RESET_FILES:
            (Path("/etc/kubernetes") / name).unlink(missing_ok=True)
        for directory in map(Path, RESET_DIRS):
            for child in directory.glob("*") if directory.is_dir() else []:
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        print("The reset process does not clean CNI configuration, iptables, IPVS, kubeconfig")
        return 0
    if len(args) == 3 and args[:2] == ["join", "--config"]:
        failed = _join(state, Path(args[2]))
        if failed:
            print(f"{failed}\n{TRAILER}", file=sys.stderr)
            return 1
        print("This node has joined the cluster")
        return 0
    print(f"unknown command {args!r} for kubeadm\n{TRAILER}", file=sys.stderr)
    return 1


def _join(state: dict[str, Any], config_path: Path) -> str:
    """kubeadm join's failure message, or "" once joined."""
    if not config_path.exists():
        return f'unable to read config from "{config_path}" : open {config_path}: no such file'
    if KUBELET_CONF.exists():
        return PREFLIGHT_KUBELET_CONF
    config = config_path.read_text()
    endpoint = _field(config, "apiServerEndpoint")
    node = _field(config, "name")
    instructed = state["join_failures"].pop(0) if state["join_failures"] else ""
    state["joins"].append(endpoint)
    if instructed:
        return str(instructed)
    cluster = state["clusters"][endpoint]
    if apiserver.ready(cluster["nodes"].get(node)):
        return NODE_EXISTS.format(name=node)
    KUBELET_CONF.parent.mkdir(parents=True, exist_ok=True)
    KUBELET_CONF.write_text(
        f"apiVersion: v1\nclusters:\n- cluster:\n    server: https://{endpoint}\n"
        "  name: default-cluster\n"
    )
    CA.parent.mkdir(parents=True, exist_ok=True)
    CA.write_text(cluster["ca"])
    CLIENT_CERT.parent.mkdir(parents=True, exist_ok=True)
    CLIENT_CERT.write_text(f"CERTIFICATE system:node:{node}\nPRIVATE KEY\n")
    cluster["nodes"][node] = apiserver.node(state, node, cluster.get("node_ready", True))
    return ""


def _field(config: str, key: str) -> str:
    found = re.search(rf"^\s*{key}:\s*(\S+)\s*$", config, re.MULTILINE)
    return found.group(1) if found else ""


def ip(args: list[str], _directory: Path) -> int:
    if args[:2] == ["link", "delete"] and len(args) == 3:
        interface = Path("/sys/class/net") / args[2]
        if not interface.exists():
            print(f'Cannot find device "{args[2]}"', file=sys.stderr)
            return 1
        interface.rmdir()
    return 0


def iptables_save(_args: list[str], directory: Path) -> int:
    rules = directory / f"{Path(sys.argv[0]).name.removesuffix('-save')}.rules"
    sys.stdout.write(rules.read_text() if rules.exists() else "")
    return 0


def iptables_restore(_args: list[str], directory: Path) -> int:
    rules = directory / f"{Path(sys.argv[0]).name.removesuffix('-restore')}.rules"
    rules.write_text(sys.stdin.read())
    return 0


def curl(state: dict[str, Any], args: list[str]) -> int:
    try:
        request = _curl_options(args)
    except ValueError as e:
        print(f"curl: {e}", file=sys.stderr)
        return 2
    transport = _transport(state, request)
    if isinstance(transport, tuple):
        code, message = transport
        if request["show_errors"]:
            print(f"curl: ({code}) {message}", file=sys.stderr)
        return code
    status, body = apiserver.answer(state, transport, request)
    if request["out"] is not None:
        Path(request["out"]).write_text(body)
    else:
        sys.stdout.write(body)
    if request["write_out"] is not None:
        sys.stdout.write(request["write_out"].replace("%{http_code}", str(status)))
    return 0


_VALUED = {"--max-time", "--cacert", "--cert", "--key", "-H", "-X", "-d", "-o", "-w"}


def _curl_options(args: list[str]) -> dict[str, Any]:
    request: dict[str, Any] = {
        "headers": {},
        "method": None,
        "data": None,
        "out": None,
        "write_out": None,
        "cacert": None,
        "cert": None,
        "url": None,
        "show_errors": True,
    }
    words = iter(args)
    for word in words:
        if word in _VALUED:
            value = next(words, None)
            if value is None:
                raise ValueError(f"option {word}: requires parameter")
            _set_option(request, word, value)
        elif re.fullmatch(r"-[sS]+", word):
            request["show_errors"] = "S" in word or "s" not in word
        elif word.startswith("-"):
            raise ValueError(f"option {word}: is unknown")
        else:
            request["url"] = word
    if request["method"] is None:  # curl: -d makes a POST, otherwise a GET
        request["method"] = "POST" if request["data"] is not None else "GET"
    request["headers"].setdefault("user-agent", "curl/8.5.0")
    if request["data"] is not None:  # curl's default for -d
        request["headers"].setdefault("content-type", "application/x-www-form-urlencoded")
    return request


def _set_option(request: dict[str, Any], option: str, value: str) -> None:
    if option == "-H":
        key, _, header = value.partition(":")
        request["headers"][key.strip().lower()] = header.strip()
    else:
        field = {"-X": "method", "-d": "data", "-o": "out", "-w": "write_out"}.get(option)
        if field is None:
            field = option.removeprefix("--").replace("-", "_")
        request[field] = value


def _transport(state: dict[str, Any], request: dict[str, Any]) -> str | tuple[int, str]:
    """The endpoint that answers, or curl's exit code and message when TLS or TCP fails."""
    match = re.fullmatch(r"https://([^/]+)(/.*)", request["url"] or "")
    if match is None:
        return 3, f"URL rejected: Malformed input to a URL function: {request['url']}"
    endpoint, request["path"] = match.groups()
    cluster = state["clusters"].get(endpoint)
    if cluster is None:
        host, _, port = endpoint.rpartition(":")
        return 7, f"Failed to connect to {host} port {port}: Couldn't connect to server"
    cacert = request["cacert"]
    if cacert is None or not Path(cacert).is_file():
        return 77, f"error setting certificate file: {cacert}"
    if Path(cacert).read_text() != cluster["ca"]:
        return 60, "SSL certificate problem: unable to get local issuer certificate"
    if request["cert"] is not None and not Path(request["cert"]).is_file():
        return 58, f"could not load PEM client certificate from {request['cert']}"
    return str(endpoint)


STATE_HANDLERS: dict[str, Callable[[dict[str, Any], list[str]], int]] = {
    "kubeadm": kubeadm,
    "curl": curl,
}
FILE_HANDLERS: dict[str, Callable[[list[str], Path], int]] = {
    "ip": ip,
    "iptables-save": iptables_save,
    "ip6tables-save": iptables_save,
    "iptables-restore": iptables_restore,
    "ip6tables-restore": iptables_restore,
}
