"""`joinops clusters` lists every cluster even when one is down; `joinops sandbox` works."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import yaml

from cli import main


def test_clusters_lists_every_cluster_and_which_cannot_be_reached(configured, capsys):
    configured.cluster("clusterC").faults.add(reachable=False)
    assert main(["clusters", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["clusterA"] == {
        "name": "clusterA",
        "reachable": True,
        "version": "v1.31.4",
        "nodes": 5,
        "control_planes": 1,
        "endpoint": configured.cluster("clusterA").server,
        "problem": "",
    }
    assert rows["clusterB"]["endpoint"] == "cp.b.test:6443"
    assert rows["clusterC"]["reachable"] is False
    assert "did not answer" in rows["clusterC"]["problem"]
    assert rows["host-1"]["nodes"] == 1


def test_clusters_table_for_people(configured, capsys):
    assert main(["clusters"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [
        "CLUSTER",
        "VERSION",
        "NODES",
        "CONTROL-PLANES",
        "ENDPOINT",
        "STATUS",
    ]
    assert lines[1].split()[:4] == ["clusterA", "v1.31.4", "5", "1"]


def test_unreadable_kubeconfig_is_a_configuration_error(world, tmp_path, monkeypatch, capsys):
    config = tmp_path / "joinops.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "clusters": {
                    "clusterA": {"kubeconfig": str(tmp_path / "nope.kubeconfig")},
                    "clusterB": {"kubeconfig": str(tmp_path / "nope.kubeconfig")},
                }
            }
        )
    )
    monkeypatch.setenv("JOINOPS_CONFIG", str(config))
    assert main(["plan", "a-w-1", "--from", "clusterA", "--to", "clusterB"]) == 2
    err = capsys.readouterr().err
    assert "clusters.clusterA: cannot use kubeconfig" in err and "nope.kubeconfig" in err


def test_sandbox_starts_clusters_a_newcomer_can_plan_against(tmp_path):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    sandbox = subprocess.Popen(
        [sys.executable, "-m", "cli", "sandbox", "--dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        text=True,
    )
    try:
        assert sandbox.stdout is not None
        first = sandbox.stdout.readline()
        assert first.startswith("Simulated clusters are running: clusterA, clusterB")
        env["JOINOPS_CONFIG"] = str(tmp_path / "joinops.yaml")
        plan = subprocess.run(
            [
                sys.executable,
                "-m",
                "cli",
                "plan",
                "a-w-1",
                "--from",
                "clusterA",
                "--to",
                "clusterB",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert plan.returncode == 0, plan.stderr
        assert plan.stdout.startswith("ALLOWED: move a-w-1 from clusterA to clusterB")
    finally:
        sandbox.terminate()
        sandbox.wait(timeout=60)  # SIGTERM stops it and its own redis-server


def test_sandbox_runs_a_deployment_under_a_budget_and_one_bare_pod(tmp_path):
    from kubernetes import client, config

    sandbox = subprocess.Popen(
        [sys.executable, "-m", "cli", "sandbox", "--dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        text=True,
    )
    try:
        assert sandbox.stdout is not None
        assert sandbox.stdout.readline().startswith("Simulated clusters are running")
        api = config.new_client_from_config(str(tmp_path / "kubeconfig"), context="clusterA")
        apps, core, policy = client.AppsV1Api(api), client.CoreV1Api(api), client.PolicyV1Api(api)
        web = apps.read_namespaced_deployment("web", "default")
        assert (web.spec.replicas, web.status.ready_replicas) == (5, 5)
        budget = policy.read_namespaced_pod_disruption_budget("web", "default")
        assert (budget.spec.min_available, budget.status.current_healthy) == (3, 5)
        pods = core.list_namespaced_pod("default").items
        owned = [p for p in pods if p.metadata.owner_references]
        assert len(owned) == 5
        assert all(p.metadata.owner_references[0].kind == "ReplicaSet" for p in owned)
        (bare,) = [p for p in pods if not p.metadata.owner_references]
        assert bare.metadata.name == "debug" and bare.spec.node_name not in ("a-w-1", None)
    finally:
        sandbox.terminate()
        sandbox.wait(timeout=60)  # SIGTERM stops it and its own redis-server
