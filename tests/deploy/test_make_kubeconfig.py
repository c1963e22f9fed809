"""deploy/make-kubeconfig.sh against a stand-in kubectl: the kubeconfig it writes works with the
official client and keeps the token out of sight."""

from __future__ import annotations

import base64
import os
import stat
import subprocess
from pathlib import Path

import pytest
from deploy_rbac import ROOT
from kubernetes import client, config

SCRIPT = ROOT / "deploy" / "make-kubeconfig.sh"
TOKEN = "eyJhbGciOiJSUzI1NiJ9.joinops-test-token.signature"
CA_PEM = b"-----BEGIN CERTIFICATE-----\nMIIBdummyca\n-----END CERTIFICATE-----\n"

# Answers the three kubectl calls the script makes; logs its arguments.
FAKE_KUBECTL = """#!/usr/bin/env bash
echo "$*" >> "$FAKE_LOG"
case "$*" in
  "config current-context") echo ctx-current ;;
  *"config view --minify --raw"*) printf '%s' "https://api.cluster-a.example:6443" ;;
  *"jsonpath={.data.token}") printf '%s' "$FAKE_TOKEN" ;;
  *"jsonpath={.data.ca\\\\.crt}") printf '%s' "$FAKE_CA" ;;
  *) echo "unexpected: $*" >&2; exit 1 ;;
esac
"""


@pytest.fixture
def kubectl(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "kubectl"
    fake.write_text(FAKE_KUBECTL)
    fake.chmod(0o755)
    return {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "FAKE_LOG": str(tmp_path / "kubectl.log"),
        "FAKE_TOKEN": base64.b64encode(TOKEN.encode()).decode(),
        "FAKE_CA": base64.b64encode(CA_PEM).decode(),
    }


def run(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=30
    )


def test_writes_a_kubeconfig_the_client_loads(kubectl: dict[str, str], tmp_path: Path) -> None:
    done = run(kubectl, tmp_path, "--context", "prod-east", "--name", "prod_east")
    assert done.returncode == 0, done.stderr
    assert TOKEN not in done.stdout + done.stderr
    assert "joinops-kubeconfig-prod-east --from-file=kubeconfig=prod_east.kubeconfig" in done.stderr
    path = tmp_path / "prod_east.kubeconfig"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    configuration = client.Configuration()
    config.load_kube_config(str(path), client_configuration=configuration, persist_config=False)
    assert configuration.host == "https://api.cluster-a.example:6443"
    assert f"Bearer {TOKEN}" in configuration.api_key.values()
    assert Path(configuration.ssl_ca_cert).read_bytes() == CA_PEM

    calls = Path(kubectl["FAKE_LOG"]).read_text().splitlines()
    assert all(c.startswith("--context prod-east ") for c in calls)
    assert "--context prod-east -n joinops-system get secret joinops-token" in calls[1]


def test_defaults_to_the_current_context(kubectl: dict[str, str], tmp_path: Path) -> None:
    done = run(kubectl, tmp_path, "--output", "-")
    assert done.returncode == 0, done.stderr
    assert "current-context: ctx-current" in done.stdout


def test_refuses_when_the_token_is_not_there(kubectl: dict[str, str], tmp_path: Path) -> None:
    done = run({**kubectl, "FAKE_TOKEN": ""}, tmp_path, "--context", "c", "--wait", "0")
    assert done.returncode == 1
    assert "has no token yet" in done.stderr
    assert not (tmp_path / "c.kubeconfig").exists()


def test_refuses_a_name_joinops_would_refuse(kubectl: dict[str, str], tmp_path: Path) -> None:
    done = run(kubectl, tmp_path, "--context", "c", "--name", "bad name")
    assert done.returncode == 1
    assert "--name bad name" in done.stderr
