"""The node agent's unit, executed: the very script workers/agent_return.py and workers/agent.py
hand to systemd-run, run by the real /bin/sh of a Debian/Ubuntu host (dash; bash in POSIX mode,
as /bin/sh is on the RHEL family, for the return) against fakes of what it calls.

kubesim interprets the unit's steps; it never runs the shell. Here the shell runs (in a private
mount and network namespace, tests/host/hostns.py) and what an operator would notice is
checked: the kubeadm calls and their JoinConfigurations, the phases the unit writes into the
source's record ConfigMap, what is left on the host, the exit status systemd records.

What each fake stands for (tests/host/fakes.py, tests/host/apiserver.py):
- /bin/sh: dash, the shell systemd starts `/bin/sh unit.sh` with on Debian and Ubuntu.
- curl: real curl's flags as used (-sS, --max-time, --cacert, --cert/--key, -H, -X, -d, -o,
  -w '%{http_code}'), exit 0 on any HTTP status, 77/58/60/7 on TLS and TCP failures.
- the kube-apiserver behind it: bootstrap-token and kubelet-certificate authentication, RBAC on
  the record alone, the Node authorizer; JSON pretty-printed for a curl User-Agent; 409 for a
  merge patch whose metadata.resourceVersion is stale, 400 for one that is not valid JSON
  (a control character in a string), 429 when throttling.
- kubeadm: reset's deletions; join's preflight refusal while kubelet.conf exists, its refusal
  while a Ready Node of the name stands, its files once joined, and its error output ending in
  "To see the stack trace of this error execute with --v=5 or higher".
- the worker (joinops): writes way-clear after deleting the old Node, once it has seen
  `returning`; the test writes target-complete where joinops would have confirmed the join.
"""

from __future__ import annotations

import shlex
import subprocess
import time
from pathlib import Path

import pytest

from tests.host import scenario
from tests.host.hostns import Host
from tests.host.scenario import ID, NAMESPACE, SOURCE, TARGET, WORK
from workers import agent, agent_return

UNIT = f"{WORK}/unit.sh"
JOIN, BACK = f"{WORK}/join-config.yaml", f"{WORK}/return-config.yaml"
DISCOVERY = (
    "[preflight] Running pre-flight checks\n"
    "error execution phase preflight: couldn't validate the identity of the API Server: Get "
    f'"https://{TARGET}/api/v1/namespaces/kube-public/configmaps/cluster-info?timeout=10s": '
    "net/http: request canceled while waiting for connection"
)
PREFLIGHT = (
    "[preflight] Running pre-flight checks\n"
    "error execution phase preflight: [preflight] Some fatal errors occurred:\n"
    "\t[ERROR Port-10250]: Port 10250 is in use\n"
    "\t[ERROR FileContent--proc-sys-net-ipv4-ip_forward]: /proc/sys/net/ipv4/ip_forward "
    "contents are not set to 1\n"
    "[preflight] If you know what you are doing, you can make a check non-fatal with "
    "`--ignore-preflight-errors=...`"
)
SAID = {  # what the record says of each: kubeadm's error, one line, no quotes
    DISCOVERY: "kubeadm: error execution phase preflight: couldn't validate the identity of the "
    f"API Server: Get https://{TARGET}/api/v1/namespaces/kube-public/configmaps/cluster-info"
    "?timeout=10s: net/http: request canceled while waiting for connection",
    PREFLIGHT: "kubeadm: error execution phase preflight: [preflight] Some fatal errors "
    "occurred: [ERROR Port-10250]: Port 10250 is in use [ERROR FileContent--proc-sys-net-ipv4-"
    "ip_forward]: /proc/sys/net/ipv4/ip_forward contents are not set to 1",
}
ETCD = "error execution phase control-plane-join/etcd: etcdserver: unhealthy cluster"


@pytest.fixture
def host(tmp_path: Path) -> Host:
    return scenario.source_host(Host(tmp_path, scenario.INTERFACES))


def assert_cleaned(host: Host) -> None:
    """What kubeadm reset leaves and the unit removes (workers/hostcleanup.py)."""
    for path in ("/etc/cni/net.d/10-flannel.conflist", "/var/lib/cni", "/root/.kube/config"):
        assert not host.exists(path), path
    assert host.interfaces() == ["eth0", "lo"]
    rules = host.fake_file("iptables.rules").read_text()
    assert "KUBE-" not in rules and "MASQUERADE" in rules


def test_a_join_that_succeeds_ends_the_unit_in_the_target(host: Host) -> None:
    ran = host.run("/bin/sh", UNIT)

    assert ran.rc == 0, ran.journal
    assert scenario.kubeadm_joins(host) == ["reset", JOIN]
    assert scenario.phases(host) == ["reset", "target-joining"]
    assert "abandoned" not in scenario.record(host)
    assert not host.exists(WORK)
    assert_cleaned(host)
    [ready] = [r for r in host.state["requests"] if r["cluster"] == "target"]
    assert (ready["method"], ready["path"], ready["status"]) == (
        "GET",
        f"/api/v1/nodes/{scenario.NODE}",
        200,
    )  # asked with the kubelet's own certificate, as the Node authorizer allows
    assert "joinops: removing the CNI configuration /etc/cni/net.d/*" in ran.journal


@pytest.mark.parametrize("shell", [["/bin/sh"], ["/bin/bash", "--posix"]], ids=["dash", "bash"])
@pytest.mark.parametrize("failure", [DISCOVERY, PREFLIGHT], ids=["discovery", "preflight"])
def test_a_failed_join_goes_back_into_the_source(
    host: Host, failure: str, shell: list[str]
) -> None:
    scenario.with_state(host, join_failures=[failure])

    ran = host.run(*shell, UNIT)

    assert ran.rc == 0, ran.journal
    assert scenario.phases(host) == [
        "reset",
        "target-joining",
        "abandoned",
        "returning",
        "returned",
    ]
    record = scenario.record(host)
    assert record["abandoned"] == record["returning"] == SAID[failure]
    # reset again before the way back, which waited for joinops's way-clear (one poll, one
    # sleep): kubeadm would refuse the join while the old Ready Node stands
    assert scenario.kubeadm_joins(host) == ["reset", JOIN, "reset", BACK]
    assert host.calls("sleep") == [["5"]]
    assert host.state["joins"] == [TARGET, SOURCE]
    assert scenario.NODE in host.state["clusters"][SOURCE]["nodes"]
    assert not host.exists(WORK)


def test_a_join_joinops_confirmed_is_never_abandoned(host: Host) -> None:
    state = host.state
    state["clusters"][SOURCE]["configmaps"][f"{NAMESPACE}/{scenario.RECORD}"]["data"][
        agent_return.COMPLETE
    ] = "true"
    state["join_failures"] = [ETCD]
    host.state = state

    ran = host.run("/bin/sh", UNIT)

    assert ran.rc == 1, ran.journal
    assert scenario.kubeadm_joins(host) == ["reset", JOIN]  # no second reset
    assert scenario.abandon_patches(host) == []
    assert "abandoned" not in scenario.record(host)
    assert not host.exists(WORK)


def test_a_record_changed_meanwhile_is_read_again_before_the_mark(host: Host) -> None:
    """Another write (an operator's annotation) lands between the unit's read and its patch:
    the API server answers 409 to the stale resourceVersion; the unit reads again and marks."""
    annotate = {"metadata": {"annotations": {"note": "looked at"}}}
    scenario.with_state(
        host, join_failures=[ETCD], meanwhile=[{"contains": "abandoned", "patch": annotate}]
    )

    ran = host.run("/bin/sh", UNIT)

    assert ran.rc == 0, ran.journal
    first, second = scenario.abandon_patches(host)
    assert (first["status"], second["status"]) == (409, 200)
    assert first["body"]["metadata"] != second["body"]["metadata"]
    assert ["2"] in host.calls("sleep")
    assert scenario.phases(host)[-1] == "returned"


def test_target_complete_written_meanwhile_wins_over_the_mark(host: Host) -> None:
    complete = {"data": {agent_return.COMPLETE: "true"}}
    scenario.with_state(
        host, join_failures=[ETCD], meanwhile=[{"contains": "abandoned", "patch": complete}]
    )

    ran = host.run("/bin/sh", UNIT)

    assert ran.rc == 1, ran.journal
    assert [p["status"] for p in scenario.abandon_patches(host)] == [409]
    assert scenario.kubeadm_joins(host) == ["reset", JOIN]
    assert "abandoned" not in scenario.record(host)


def test_a_failed_read_never_leads_to_an_unconditional_mark(host: Host) -> None:
    """The API server throttles the unit's read (429, a Status without the record): without a
    resourceVersion the patch would be unconditional and overwrite joinops's target-complete."""
    state = host.state
    state["clusters"][SOURCE]["configmaps"][f"{NAMESPACE}/{scenario.RECORD}"]["data"][
        agent_return.COMPLETE
    ] = "true"
    state["join_failures"] = [ETCD]
    state["throttle"] = [{"method": "GET"}]
    host.state = state

    ran = host.run("/bin/sh", UNIT)

    assert ran.rc == 1, ran.journal
    assert scenario.abandon_patches(host) == []
    assert "abandoned" not in scenario.record(host)
    assert host.calls("sleep") == [["5"]]


def test_a_way_back_that_fails_says_kubeadms_error(host: Host) -> None:
    scenario.with_state(host, join_failures=[ETCD, DISCOVERY])

    ran = host.run("/bin/sh", UNIT)

    assert ran.rc == 1, ran.journal
    assert scenario.phases(host)[-1] == "return-failed"
    assert scenario.record(host)["return-failed"] == SAID[DISCOVERY]
    assert scenario.record(host)["abandoned"] == f"kubeadm: {ETCD}"
    assert not host.exists(WORK)


@pytest.mark.parametrize("seconds", [0, 1])
def test_a_node_never_ready_in_the_target_goes_back(tmp_path: Path, seconds: int) -> None:
    host = scenario.source_host(Host(tmp_path, scenario.INTERFACES), join_seconds=seconds)
    state = host.state
    state["clusters"][TARGET]["node_ready"] = False
    host.state = state

    ran = host.run("/bin/sh", UNIT)

    assert ran.rc == 0, ran.journal
    assert scenario.record(host)["abandoned"] == f"no Ready within {seconds}s"
    assert scenario.kubeadm_joins(host) == ["reset", JOIN, "reset", BACK]
    asked = [r for r in host.state["requests"] if r["cluster"] == "target"]
    assert asked and {r["status"] for r in asked} == {200}  # it read its NotReady Node
    assert scenario.phases(host)[-1] == "returned"


@pytest.mark.parametrize("joins", [True, False], ids=["joined", "join-failed"])
def test_a_host_without_curl_joins_the_target_without_a_way_back(host: Host, joins: bool) -> None:
    host.without("curl")
    scenario.with_state(host, join_failures=[] if joins else [ETCD])

    ran = host.run("/bin/sh", UNIT)

    assert ran.rc == (0 if joins else 1), ran.journal
    assert agent_return.NO_CURL in ran.journal
    assert scenario.kubeadm_joins(host) == ["reset", JOIN]
    assert host.state["requests"] == []
    assert not host.exists(WORK)
    assert_cleaned(host)


@pytest.mark.parametrize("joins", [True, False], ids=["joined", "join-failed"])
def test_the_plain_unit_resets_cleans_and_joins(host: Host, joins: bool) -> None:
    """The unit without return material (workers/agent.py), from the agent pod's own line."""
    [line] = [x for x in agent.kubeadm_script(ID).splitlines() if "systemd-run" in x]
    words = shlex.split(line)
    assert words[-3:-1] == ["/bin/sh", "-c"]
    host.write(agent.HOST_JOIN_FILE, scenario.join_config(TARGET))
    scenario.with_state(host, join_failures=[] if joins else [ETCD])

    ran = host.run("/bin/sh", "-c", words[-1])

    assert ran.rc == (0 if joins else 1), ran.journal
    assert scenario.kubeadm_joins(host) == ["reset", agent.HOST_JOIN_FILE]
    assert not host.exists(agent.HOST_JOIN_FILE)
    assert_cleaned(host)


@pytest.mark.parametrize("returnable", [True, False])
def test_the_agent_pods_script_is_valid_sh(returnable: bool) -> None:
    script = agent.kubeadm_script(ID, NAMESPACE if returnable else "")
    checked = subprocess.run(["/bin/sh", "-n"], input=script, text=True, capture_output=True)
    assert checked.returncode == 0, checked.stderr


@pytest.mark.parametrize("late", [False, True])
def test_the_agent_pod_writes_the_unit_as_is_and_starts_it(tmp_path: Path, late: bool) -> None:
    """The pod's script, run with its /host, its Secret mount and its termination log moved
    under /root (the pod's paths do not exist here): past its deadline it does nothing; else the
    heredoc writes unit.sh byte for byte and systemd-run starts it."""
    host = Host(tmp_path)
    for name, text in {"join-config.yaml": "join", "return-token": scenario.RETURN_TOKEN}.items():
        host.write(f"/root/secret/{name}", text, 0o644)
    script = agent.kubeadm_script(ID, NAMESPACE)
    for pod_path, here in (
        ("/host", "/root/host"),
        (" /joinops/*", " /root/secret/*"),
        ("/dev/termination-log", "/root/termination-log"),
    ):
        script = script.replace(pod_path, here)
    not_after = int(time.time()) + (-60 if late else 600)

    ran = host.run("/usr/bin/env", f"JOINOPS_NOT_AFTER={not_after}", "/bin/sh", "-c", script)

    if late:
        assert ran.rc == 3 and host.calls() == []
        assert "nothing done" in host.path("/root/termination-log").read_text()
        assert not host.exists(f"/root/host{WORK}")
        return
    assert ran.rc == 0, ran.journal
    unit = host.path(f"/root/host{WORK}/unit.sh")
    assert unit.read_text() == agent_return.unit_script(ID, NAMESPACE) + "\n"
    assert host.path(f"/root/host{WORK}").stat().st_mode & 0o777 == 0o700
    assert host.path(f"/root/host{WORK}/return-token").stat().st_mode & 0o777 == 0o600
    assert host.calls("chroot") == [
        [
            "/root/host",
            "systemd-run",
            f"--unit={agent.unit_name(ID)}",
            "--collect",
            "--property=Type=oneshot",
            "/bin/sh",
            UNIT,
        ]
    ]
    assert host.calls("sleep") == [["infinity"]]
