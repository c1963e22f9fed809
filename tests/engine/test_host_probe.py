"""The host and its agent (issue 30): what the host itself says is checked before anything is
changed on it, an agent that never starts is removed and never acts late, the network a node
brings along is cleaned, and its own kubelet settings survive the move.

The simulated hosts model what the real ones do here (kubesim/behaviours/host_probe.py,
pod_network.py, join_preflight.py): kubeadm's join preflight (cmd/kubeadm/app/preflight:
`Port-N` "Port N is in use"; the CRI detection's "found multiple CRI endpoints on the host"),
`curl` to an endpoint the host cannot reach, the kubelet refusing a node-ip that is not on the
host, image pulls that back off, and the bridge CNI plugin keeping `cni0` across `kubeadm
reset` (flannel-io/flannel#1850).
"""

from __future__ import annotations

from joinops.requests.events import EventKind
from joinops.requests.lifecycle import State
from joinops.requests.model import Role
from joinops.settings import DEFAULT_AGENT_IMAGE, DEFAULT_CHECK_IMAGE
from tests.support.engine import approved_request
from tests.support.faults import leftovers
from workers import agent
from workers.runner import run_request

NODE = "a-w-1"
CONTAINERD = "unix:///var/run/containerd/containerd.sock"
CRIO = "unix:///var/run/crio/crio.sock"


def outcome(ctx, request) -> str:  # type: ignore[no-untyped-def]
    return str(ctx.store.get(request.id).outcome)


def host_events(world, node: str = NODE) -> list[str]:  # type: ignore[no-untyped-def]
    return [e.kind for e in world.events if e.subject == node]


def untouched_in_source(world, node: str = NODE) -> bool:  # type: ignore[no-untyped-def]
    """Still in clusterA, Ready, schedulable, its host never reset; nothing of it in clusterB."""
    a, b = world.cluster("clusterA"), world.cluster("clusterB")
    found = a.node(node)
    ready = any(
        c["type"] == "Ready" and c["status"] == "True"
        for c in (found or {}).get("status", {}).get("conditions", [])
    )
    return (
        ready
        and not found["spec"].get("unschedulable")
        and b.node(node) is None
        and "host-reset" not in host_events(world, node)
        and world.host(node).cluster == "clusterA"
    )


def left_behind(world) -> list[str]:  # type: ignore[no-untyped-def]
    """joinops's pods, Secrets and tokens still in either cluster."""
    return leftovers([world.cluster("clusterA"), world.cluster("clusterB")])


def test_an_endpoint_the_host_cannot_reach_is_found_before_the_reset(world, make_ctx):
    world.host(NODE).unreachable.add("cp.b.test:6443")  # a firewall between the node and B
    ctx = make_ctx()
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.FAILED
    final = ctx.store.get(request.id)
    assert final.failed_step == "probe" and not final.agent_started
    text = outcome(ctx, request)
    assert "the target endpoint is not reachable from the node" in text
    assert "Failed to connect to cp.b.test port 6443" in text  # curl's own words
    assert "Nothing was reset" in text
    assert untouched_in_source(world)
    assert left_behind(world) == []  # the join material was taken back


def test_a_port_taken_on_the_host_is_found_before_the_reset(world, make_ctx):
    """A worker becoming a control plane needs the API server's port; nginx holds it."""
    world.host(NODE).busy_ports[6443] = "nginx"
    ctx = make_ctx()
    request = approved_request(ctx, NODE, "clusterA", "clusterB", Role.CONTROL_PLANE)
    assert run_request(ctx, request.id) is State.FAILED
    text = outcome(ctx, request)
    assert ctx.store.get(request.id).failed_step == "probe"
    assert "kubeadm join preflight: [preflight] Some fatal errors occurred" in text
    assert "[ERROR Port-6443]: Port 6443 is in use" in text
    assert untouched_in_source(world)


def test_the_ports_of_the_nodes_own_control_plane_are_not_a_reason_to_refuse(world, make_ctx):
    """A source control plane's API server and etcd hold 6443/2379/2380 until the reset."""
    ctx = make_ctx()
    request = approved_request(ctx, "a-cp-3", "clusterA", "clusterB", Role.CONTROL_PLANE)
    assert run_request(ctx, request.id) is State.SUCCEEDED, outcome(ctx, request)


def test_a_node_ip_not_on_the_host_is_refused_by_the_probe(world, make_ctx):
    world.host(NODE).kubelet_flags["node-ip"] = "10.9.9.9"
    ctx = make_ctx()
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.FAILED
    assert "node-ip 10.9.9.9 is not an address of this host" in outcome(ctx, request)
    assert untouched_in_source(world)


def test_the_node_ip_of_a_multi_nic_host_survives_the_move(world, make_ctx):
    host = world.host(NODE)
    default, second = host.addresses[0], "192.168.50.7"
    host.addresses.append(second)
    host.kubelet_flags["node-ip"] = second  # kubeadm-flags.env: the cluster network's NIC
    host.kubelet_flags["cloud-provider"] = "external"
    ctx = make_ctx()
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.SUCCEEDED, outcome(ctx, request)
    node = world.cluster("clusterB").node(NODE)
    internal = [a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP"]
    assert internal == [second] and second != default
    assert host.kubelet_flags["cloud-provider"] == "external"  # written back by kubeadm join
    thread = [e.text for e in ctx.reporter.history(request.id) if e.step == "probe"]
    assert any("`--cloud-provider`, `--node-ip`" in t for t in thread)


def test_a_host_with_two_runtime_sockets_joins_with_its_kubelets_own(world, make_ctx):
    host = world.host(NODE)
    host.runtime_sockets = [CONTAINERD, CRIO]  # kubeadm alone would refuse to choose
    host.kubelet_flags["container-runtime-endpoint"] = CRIO
    ctx = make_ctx()
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.SUCCEEDED, outcome(ctx, request)
    assert host.kubelet_flags["container-runtime-endpoint"] == CRIO


def test_a_cgroup_driver_the_targets_kubelet_would_refuse_stops_the_move(world, make_ctx):
    world.cluster("clusterB").set_kubelet_config(cgroup_driver="systemd")
    world.host(NODE).cgroup_driver = "cgroupfs"
    ctx = make_ctx()
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.FAILED
    text = outcome(ctx, request)
    assert "uses the `cgroupfs` cgroup driver" in text and "`cgroupDriver: systemd`" in text
    assert untouched_in_source(world)
    assert left_behind(world) == []


def test_a_probe_that_cannot_start_is_removed_and_nothing_is_done(world, make_ctx):
    world.fail_image_pulls(NODE, DEFAULT_AGENT_IMAGE)
    ctx = make_ctx(timeouts={"agent_start": "2s"})
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.FAILED
    text = outcome(ctx, request)
    assert "never started on `a-w-1` within 2 s (ImagePullBackOff" in text
    assert "nothing was reset on the host" in text
    assert world.cluster("clusterA").pods(namespace="joinops-system") == []
    assert untouched_in_source(world)


def pulls_fail_once_drained(world, image: str):  # type: ignore[no-untyped-def]
    """A hook: from the drain's end on, the node cannot pull `image` (a registry outage that
    begins after the probes ran)."""

    def hook(event) -> None:  # type: ignore[no-untyped-def]
        if event.kind is EventKind.STEP_SUCCEEDED and event.step == "drain":
            world.fail_image_pulls(NODE, image)

    return hook


def test_an_agent_that_never_starts_is_deleted_rolled_back_and_never_resets_later(world, make_ctx):
    a = world.cluster("clusterA")
    ctx = make_ctx(
        hooks=[pulls_fail_once_drained(world, DEFAULT_AGENT_IMAGE)],
        timeouts={"agent_start": "2s"},
    )
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.FAILED
    final = ctx.store.get(request.id)
    assert final.failed_step == "agent" and not final.agent_started
    text = outcome(ctx, request)
    assert "The node agent never started on `a-w-1` within 2 s (ImagePullBackOff" in text
    assert "reset it" not in text
    assert f"`{NODE}` is still in clusterA" in text
    assert a.pod("joinops-system", agent.agent_pod_name(request.id)) is None
    assert a.secret("joinops-system", agent.join_secret_name(request.id)) is None
    assert left_behind(world) == []

    # the registry is back: the kubelet retries what is still Pending on the node; a pod put
    # there now starts, and the deleted agent does not
    world.fail_image_pulls(NODE, DEFAULT_AGENT_IMAGE, fail=False)
    a.add_pod(NODE, "after", phase="Pending", spec={"containers": [{"name": "c", "image": "x"}]})
    a.wait_for(
        lambda: (a.pod("default", "after") or {}).get("status", {}).get("phase") == "Running", 60
    )
    assert untouched_in_source(world)


def test_an_agent_that_could_not_be_deleted_does_nothing_when_it_starts_late(world, make_ctx):
    """Defence in depth: the agent checks its deadline before it touches the host."""
    a = world.cluster("clusterA")

    def deny_deletes_once_drained(event) -> None:  # type: ignore[no-untyped-def]
        if event.kind is EventKind.STEP_SUCCEEDED and event.step == "drain":
            a.rbac.deny("delete", "pods", namespace="joinops-system")
            a.rbac.deny("delete", "secrets", namespace="joinops-system")

    ctx = make_ctx(
        hooks=[pulls_fail_once_drained(world, DEFAULT_AGENT_IMAGE), deny_deletes_once_drained],
        timeouts={"agent_start": "2s"},
    )
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.FAILED
    text = outcome(ctx, request)
    assert "never started" in text and "its pod could not be removed" in text.lower()
    assert a.pod("joinops-system", agent.agent_pod_name(request.id)) is not None  # left there

    world.fail_image_pulls(NODE, DEFAULT_AGENT_IMAGE, fail=False)
    world.wait_for(lambda: "agent-late" in host_events(world))
    assert untouched_in_source(world)
    pod = a.pod("joinops-system", agent.agent_pod_name(request.id))
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert "started after its deadline; nothing done" in terminated["message"]


def test_a_moved_flannel_node_runs_pods_in_the_target(world, make_ctx):
    """The bridge keeps the source's address across the reset: the unit deletes it."""
    a, b = world.cluster("clusterA"), world.cluster("clusterB")
    host = world.host(NODE)
    host.bridge_cni = True
    a.add_pod(NODE, "web", phase="Pending", spec={"containers": [{"name": "c", "image": "x"}]})
    a.wait_for(
        lambda: (a.pod("default", "web") or {}).get("status", {}).get("phase") == "Running", 60
    )
    source_bridge = host.interfaces["cni0"]  # the first address of the source's pod CIDR
    a.delete_pod("default", "web", grace=0)

    ctx = make_ctx()
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.SUCCEEDED, outcome(ctx, request)
    assert "interface cni0" in host.cleaned and "interface flannel.1" in host.cleaned
    cleanup = [e.text for e in ctx.reporter.history(request.id) if e.step == "cleanup"]
    assert any(f"Checked: a pod ran on `{NODE}` with address 10.244." in t for t in cleanup)

    b.add_pod(NODE, "next", phase="Pending", spec={"containers": [{"name": "c", "image": "x"}]})
    b.wait_for(
        lambda: (b.pod("default", "next") or {}).get("status", {}).get("phase") == "Running", 60
    )
    assert host.interfaces["cni0"] != source_bridge  # made anew from the target's pod CIDR


def test_a_node_that_joined_but_cannot_run_a_pod_is_not_called_a_success(world, make_ctx):
    world.fail_image_pulls(NODE, DEFAULT_CHECK_IMAGE)  # nothing can start there in the target
    ctx = make_ctx(timeouts={"pod_check": "1s"})
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.FAILED
    text = outcome(ctx, request)
    assert ctx.store.get(request.id).failed_step == "cleanup"
    assert f"`{NODE}` is Ready in clusterB, but a pod cannot start on it: ImagePullBackOff" in text
    assert "joined with pods that cannot start" in text
    assert world.cluster("clusterA").node(NODE) is None  # the source was cleaned up
    assert world.cluster("clusterB").pods(namespace="joinops-system") == []


def test_a_target_can_skip_the_pod_check(world, make_ctx):
    world.fail_image_pulls(NODE, DEFAULT_CHECK_IMAGE)
    ctx = make_ctx(timeouts={"pod_check": "1s"}, cluster_options={"clusterB": {"pod_check": False}})
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.SUCCEEDED, outcome(ctx, request)


def label_and_taint(world) -> None:  # type: ignore[no-untyped-def]
    """The operators' own labels and taint on the node, and a cluster-owned label."""
    from kubernetes import client

    api = client.CoreV1Api(world.cluster("clusterA").api_client())
    try:
        api.patch_node(
            NODE,
            {
                "metadata": {
                    "labels": {
                        "team": "data",
                        "node-restriction.kubernetes.io/pool": "fast",
                        "topology.kubernetes.io/zone": "zone-a",
                    }
                },
                "spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]},
            },
        )
    finally:
        api.api_client.close()


def test_the_nodes_own_labels_and_taints_come_along_when_asked(world, make_ctx):
    label_and_taint(world)
    ctx = make_ctx(agent={"keep_labels_and_taints": True})
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.SUCCEEDED, outcome(ctx, request)
    node = world.cluster("clusterB").node(NODE)
    labels = node["metadata"]["labels"]
    assert labels["team"] == "data" and labels["node-restriction.kubernetes.io/pool"] == "fast"
    assert "topology.kubernetes.io/zone" not in labels  # the target's own topology
    taints = [(t["key"], t.get("value"), t["effect"]) for t in node["spec"]["taints"]]
    assert ("dedicated", "gpu", "NoSchedule") in taints
    assert not any(key == "node.kubernetes.io/unschedulable" for key, _, _ in taints)


def test_labels_and_taints_stay_behind_by_default(world, make_ctx):
    label_and_taint(world)
    ctx = make_ctx()
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.SUCCEEDED, outcome(ctx, request)
    node = world.cluster("clusterB").node(NODE)
    assert "team" not in node["metadata"]["labels"]
    assert not any(t["key"] == "dedicated" for t in node["spec"].get("taints") or [])


def test_a_pending_agent_on_a_node_that_stopped_reporting_is_not_rolled_back(world, make_ctx):
    """A reset that stopped the kubelet before it reported the agent Running leaves the pod
    Pending for good and the node NotReady: nothing says the host is untouched, so the move is
    not undone (the node's kubelet is stopped here, as the reset would)."""
    a = world.cluster("clusterA")

    def kubelet_stops_once_drained(event) -> None:  # type: ignore[no-untyped-def]
        if event.kind is EventKind.STEP_SUCCEEDED and event.step == "drain":
            a.stop_kubelet(NODE)

    ctx = make_ctx(hooks=[kubelet_stops_once_drained], timeouts={"agent_start": "1s", "join": "2s"})
    request = approved_request(ctx, NODE, "clusterA", "clusterB")
    assert run_request(ctx, request.id) is State.FAILED
    final = ctx.store.get(request.id)
    assert final.failed_step == "wait-joined" and final.agent_started
    agent_lines = [e.text for e in ctx.reporter.history(request.id) if e.step == "agent"]
    assert any("no longer reports Ready either" in t for t in agent_lines)
    assert "nothing was reset" not in outcome(ctx, request)


def test_a_single_node_source_gone_while_its_agent_is_awaited_is_the_move_going_well(
    world, make_ctx
):
    """Moving a single-node cluster's only node: its reset takes the source's only API server
    with it, possibly before joinops has seen the agent pod Running. Held here: the source
    answers the agent pod's read only after the reset has destroyed it."""
    world.cluster("host-1").faults.add(
        latency_seconds=1.0, path_contains="/pods/joinops-agent-", method="GET", times=None
    )
    ctx = make_ctx()
    request = approved_request(ctx, "node-1", "host-1", "clusterB")
    assert run_request(ctx, request.id) is State.SUCCEEDED, outcome(ctx, request)
    assert not world.cluster("host-1").reachable
