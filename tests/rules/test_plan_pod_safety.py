"""`joinops plan` says, before approval, which pods a drain would lose (as kubectl drain does)."""

from __future__ import annotations

import json

from kubernetes import client

from cli import main
from kubesim import Cluster, World


def plan(capsys, *extra: str) -> tuple[int, dict]:
    code = main(["plan", "a-w-1", "--from", "clusterA", "--to", "clusterB", *extra, "--json"])
    return code, json.loads(capsys.readouterr().out)


def findings(verdict: dict) -> dict[str, tuple[str, str]]:
    return {f["code"]: (f["severity"], f["text"]) for f in verdict["findings"]}


def core(cluster: Cluster) -> client.CoreV1Api:
    return client.CoreV1Api(cluster.api_client())


def local_volume(  # type: ignore[no-untyped-def]
    cluster: Cluster,
    name: str,
    node: str,
    claim: str,
    *,
    host_path: bool = False,
    csi: str = "",
    key: str = "kubernetes.io/hostname",
):
    """A PersistentVolume pinned to `node` (under `key`), bound to default/`claim`, made through
    the client; `csi`: a CSI driver's volume instead of a local or hostPath one."""
    source = {"hostPath": {"path": f"/data/{name}"}} if host_path else {"local": {"path": "/d"}}
    if csi:
        source = {"csi": {"driver": csi, "volumeHandle": f"{name}-handle"}}
    affinity = {
        "required": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": key, "operator": "In", "values": [node]}]}
            ]
        }
    }
    api = core(cluster)
    api.create_namespaced_persistent_volume_claim(
        "default",
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
                "volumeName": name,
            },
        },
    )
    api.create_persistent_volume(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "claimRef": {"namespace": "default", "name": claim},
                "nodeAffinity": affinity,
                **source,
            },
        }
    )


def claim_spec(claim: str) -> dict:
    return {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]}


def test_a_bare_pod_refuses_the_plan_naming_it_and_the_way_out(configured: World, capsys):
    a = configured.cluster("clusterA")
    a.add_pod("a-w-1", "debug", namespace="tools")
    a.add_pod("a-w-1", "web-0", labels={"app": "web"}, owner_kind="ReplicaSet")
    code, verdict = plan(capsys)
    assert code == 1 and not verdict["allowed"]
    severity, text = findings(verdict)["uncontrolled-pods"]
    assert severity == "refusal"
    assert "`tools/debug`" in text and "web-0" not in text
    assert "nothing would ever recreate them" in text and "--force" in text and "`force`" in text

    assert main(["plan", "a-w-1", "--from", "clusterA", "--to", "clusterB"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("REFUSED") and "tools/debug" in out


def test_force_shows_what_would_be_deleted_and_exits_as_the_forced_request(
    configured: World, capsys
):
    configured.cluster("clusterA").add_pod("a-w-1", "debug", namespace="tools")
    code, verdict = plan(capsys, "--force")
    assert code == 0 and verdict["allowed"] and verdict["force"]
    assert verdict["deletes_for_good"] == ["tools/debug"]
    severity, text = findings(verdict)["uncontrolled-pods"]
    assert severity == "warning" and "deletes 1 pod no controller will recreate" in text

    assert main(["plan", "a-w-1", "--from", "clusterA", "--to", "clusterB", "--force"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ALLOWED: move a-w-1 from clusterA to clusterB as worker (forced)")
    assert "tools/debug" in out


def test_hundreds_of_bare_pods_name_ten_and_count_the_rest(configured: World, capsys):
    a = configured.cluster("clusterA")
    for i in range(250):
        a.add_pod("a-w-1", f"job-{i:03d}")
    code, verdict = plan(capsys)
    text = findings(verdict)["uncontrolled-pods"][1]
    assert code == 1 and text.startswith("250 pods on `a-w-1` without a controller")
    assert "`default/job-009`" in text and "job-010" not in text and "and 240 more" in text


def test_a_pod_on_a_node_local_volume_refuses_naming_pod_and_volume(configured: World, capsys):
    a = configured.cluster("clusterA")
    local_volume(a, "pv-fast", "a-w-1", "data-db-0")
    a.add_pod("a-w-1", "db-0", owner_kind="StatefulSet", spec=claim_spec("data-db-0"))
    code, verdict = plan(capsys)
    assert code == 1
    severity, text = findings(verdict)["local-volume-pods"]
    assert severity == "refusal"
    assert "`default/db-0` (volume `pv-fast`)" in text and "any other node" in text
    assert "uncontrolled-pods" not in findings(verdict)

    code, verdict = plan(capsys, "--force")
    assert code == 0 and verdict["deletes_for_good"] == ["default/db-0"]


def test_host_path_volume_pinned_elsewhere_does_not_refuse(configured: World, capsys):
    a = configured.cluster("clusterA")
    local_volume(a, "pv-other", "a-w-2", "data-db-1", host_path=True)
    a.add_pod("a-w-1", "db-1", owner_kind="StatefulSet", spec=claim_spec("data-db-1"))
    code, verdict = plan(capsys)
    assert code == 0 and "local-volume-pods" not in findings(verdict)


def test_host_path_volume_pinned_here_refuses(configured: World, capsys):
    a = configured.cluster("clusterA")
    local_volume(a, "pv-here", "a-w-1", "data-db-2", host_path=True)
    a.add_pod("a-w-1", "db-2", owner_kind="StatefulSet", spec=claim_spec("data-db-2"))
    code, verdict = plan(capsys)
    assert code == 1 and "pv-here" in findings(verdict)["local-volume-pods"][1]


def test_a_csi_volume_pinned_to_the_node_counts_as_node_local(configured: World, capsys):
    """TopoLVM's PVs carry required node affinity `topology.topolvm.io/node In [<node>]`: the
    data lives on that node's disks, so the StatefulSet replica could never start elsewhere."""
    a = configured.cluster("clusterA")
    local_volume(
        a, "pvc-lvm", "a-w-1", "data-db-3", csi="topolvm.io", key="topology.topolvm.io/node"
    )
    a.add_pod("a-w-1", "db-3", owner_kind="StatefulSet", spec=claim_spec("data-db-3"))
    code, verdict = plan(capsys)
    assert code == 1 and "pvc-lvm" in findings(verdict)["local-volume-pods"][1]


def test_a_zonal_csi_volume_is_not_node_local(configured: World, capsys):
    """A cloud disk names its zone, not a node: the pod can move within the zone."""
    a = configured.cluster("clusterA")
    local_volume(
        a,
        "pvc-ebs",
        "eu-west-1a",
        "data-db-4",
        csi="ebs.csi.aws.com",
        key="topology.ebs.csi.aws.com/zone",
    )
    a.add_pod("a-w-1", "db-4", owner_kind="StatefulSet", spec=claim_spec("data-db-4"))
    code, verdict = plan(capsys)
    assert code == 0 and "local-volume-pods" not in findings(verdict)


def test_empty_dir_warns_before_approval(configured: World, capsys):
    a = configured.cluster("clusterA")
    a.add_pod("a-w-1", "cache-0", owner_kind="ReplicaSet", empty_dir=True)
    code, verdict = plan(capsys)
    assert code == 0
    severity, text = findings(verdict)["empty-dir"]
    assert severity == "warning" and "`default/cache-0`" in text
    assert "emptyDir data is lost" in text


def test_daemonset_mirror_and_finished_pods_raise_nothing(configured: World, capsys):
    a = configured.cluster("clusterA")
    a.add_pod("a-w-1", "logs", owner_kind="DaemonSet", empty_dir=True)
    a.add_pod("a-w-1", "static-web", mirror=True)
    a.add_pod("a-w-1", "done", phase="Succeeded")
    a.add_pod("a-w-1", "crashed", phase="Failed", empty_dir=True)
    code, verdict = plan(capsys)
    assert code == 0 and verdict["findings"] == []


def test_a_pod_whose_daemonset_is_gone_counts_as_uncontrolled(configured: World, capsys):
    a = configured.cluster("clusterA")
    a.add_pod("a-w-1", "orphan", owner_kind="DaemonSet", owner_name="removed")
    client.AppsV1Api(a.api_client()).delete_namespaced_daemon_set("removed", "default")
    code, verdict = plan(capsys)
    assert code == 1 and "`default/orphan`" in findings(verdict)["uncontrolled-pods"][1]
