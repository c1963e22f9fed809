"""`joinops plan`: the right verdict and a specific message for every rule."""

from __future__ import annotations

import json

import pytest

from cli import main


def plan(capsys, *argv: str) -> tuple[int, dict]:
    code = main(["plan", *argv, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def codes(verdict: dict, severity: str) -> list[str]:
    return [f["code"] for f in verdict["findings"] if f["severity"] == severity]


def texts(verdict: dict) -> str:
    return " ".join(f["text"] for f in verdict["findings"])


def test_allowed_worker_shows_versions_and_steps(configured, capsys):
    code, verdict = plan(capsys, "a-w-1", "--from", "clusterA", "--to", "clusterB")
    assert code == 0 and verdict["allowed"]
    assert (verdict["kubelet_version"], verdict["target_version"]) == ("v1.31.4", "v1.32.2")
    assert codes(verdict, "refusal") == []
    assert [s["id"] for s in verdict["steps"]] == [
        "check",
        "join-material",
        "probe",
        "cordon",
        "drain",
        "agent",
        "wait-joined",
        "cleanup",
    ]


def test_allowed_worker_in_words(configured, capsys):
    assert main(["plan", "a-w-1", "--from", "clusterA", "--to", "clusterB"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ALLOWED: move a-w-1 from clusterA to clusterB as worker")
    assert "kubelet v1.31.4 on `a-w-1` vs clusterB's API server v1.32.2" in out
    assert "allowed kubelets: v1.32.x or v1.31.x" in out
    assert "[drain] Drain `a-w-1`" in out


def test_allowed_control_plane_warns_about_two_etcd_members(configured, capsys):
    code, verdict = plan(
        capsys, "a-w-1", "--from", "clusterA", "--to", "clusterB", "--as", "control-plane"
    )
    assert code == 0
    assert codes(verdict, "warning") == ["kubeadm-minor-behind", "etcd-even"]
    assert "goes from one etcd member to two" in texts(verdict)


def test_node_missing_from_source(configured, capsys):
    code, verdict = plan(capsys, "a-w-9", "--from", "clusterA", "--to", "clusterB")
    assert code == 1 and codes(verdict, "refusal") == ["node-missing"]
    assert "`a-w-9` is not a node of clusterA" in texts(verdict)


def test_name_taken_in_target(configured, capsys):
    code, verdict = plan(capsys, "taken", "--from", "clusterA", "--to", "clusterB")
    assert code == 1 and codes(verdict, "refusal") == ["name-taken"]
    assert "clusterB already has a node named `taken`" in texts(verdict)


def test_kubelet_two_minors_behind(configured, capsys):
    code, verdict = plan(capsys, "a-w-old", "--from", "clusterA", "--to", "clusterC")
    assert code == 1 and codes(verdict, "refusal") == ["version-skew"]
    assert (
        "Kubelet v1.29.5 on `a-w-old` is 2 minor releases behind clusterC's API server "
        "v1.31.1. Allowed: v1.31.x or v1.30.x"
    ) in texts(verdict)


def test_kubelet_newer_than_target(configured, capsys):
    code, verdict = plan(capsys, "a-w-new", "--from", "clusterA", "--to", "clusterB")
    assert code == 1 and codes(verdict, "refusal") == ["version-skew"]
    assert "v1.33.0 on `a-w-new` is newer than clusterB's API server v1.32.2" in texts(verdict)


def test_last_control_plane_with_workers_left(configured, capsys):
    code, verdict = plan(capsys, "a-cp-1", "--from", "clusterA", "--to", "clusterB")
    assert code == 1 and codes(verdict, "refusal") == ["last-control-plane"]
    assert "move or remove clusterA's other nodes first" in texts(verdict)


def test_single_node_source_is_allowed_with_a_destroy_warning(configured, capsys):
    code, verdict = plan(
        capsys, "node-1", "--from", "host-1", "--to", "clusterB", "--as", "control-plane"
    )
    assert code == 0 and verdict["destroys_source"]
    assert "destroys-source" in codes(verdict, "warning")
    assert "This destroys host-1" in texts(verdict)


def test_control_plane_join_needs_an_endpoint(configured, capsys):
    code, verdict = plan(
        capsys, "node-1", "--from", "host-1", "--to", "clusterC", "--as", "control-plane"
    )
    assert code == 1 and codes(verdict, "refusal") == ["no-control-plane-endpoint"]
    assert "clusterC has no `controlPlaneEndpoint`" in texts(verdict)


def test_unreachable_target(configured, capsys):
    configured.cluster("clusterB").faults.add(reachable=False)
    code, verdict = plan(capsys, "a-w-1", "--from", "clusterA", "--to", "clusterB")
    assert code == 1 and codes(verdict, "refusal") == ["cluster-error"]
    assert "Cannot check clusterB: the API server at https://127.0.0.1" in texts(verdict)


def test_rbac_forbidden_names_verb_and_resource(configured, capsys):
    configured.cluster("clusterA").rbac.deny("get", "nodes")
    code, verdict = plan(capsys, "a-w-1", "--from", "clusterA", "--to", "clusterB")
    assert code == 1 and codes(verdict, "refusal") == ["cluster-error"]
    assert "the credentials for clusterA may not get nodes/a-w-1" in texts(verdict)
    assert 'cannot get resource "nodes"' in texts(verdict)


@pytest.mark.parametrize(
    "argv,message",
    [
        (["Node_7", "--from", "clusterA", "--to", "clusterB"], "is not a valid node name"),
        (
            ["a-w-1", "--from", "clustrA", "--to", "clusterB"],
            "unknown cluster 'clustrA'. Did you mean clusterA? Known clusters: clusterA, clusterB, "
            "clusterC, host-1",
        ),
        (
            ["a-w-1", "--from", "clusterA", "--to", "clusterA"],
            "source and target are both clusterA",
        ),
        (["x" * 254, "--from", "clusterA", "--to", "clusterB"], "at most 253 characters"),
    ],
)
def test_bad_input_exits_2_with_a_specific_message(configured, capsys, argv, message):
    requests_before = {n: len(c.requests) for n, c in configured.clusters.items()}
    assert main(["plan", *argv]) == 2
    assert message in capsys.readouterr().err
    assert {n: len(c.requests) for n, c in configured.clusters.items()} == requests_before


def test_unknown_role_exits_2(configured, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["plan", "a-w-1", "--from", "clusterA", "--to", "clusterB", "--as", "master"])
    assert exit_.value.code == 2
    assert "'master' is not a role; the roles are worker, control-plane" in capsys.readouterr().err
